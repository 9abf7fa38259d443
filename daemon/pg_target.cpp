#include "daemon/pg_target.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "core/instant_text.h"
#include "core/load_statements.h"
#include "core/sql_identifier.h"

namespace tidemark {
namespace {

// The query as a subquery: trailing semicolons (and the blanks around
// them) would end the statement inside the parentheses.
std::string without_trailing_semicolons(std::string query) {
  while (!query.empty() && (query.back() == ';' || std::isspace(static_cast<unsigned char>(query.back())))) {
    query.pop_back();
  }
  return query;
}

// Characters, as the server counts an error's position (UTF-8 text).
int characters(const std::string& text) {
  return static_cast<int>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

}  // namespace

Status PgTarget::check(const TableConfig& table, const SourceTable& source) {
  try {
    const std::string name = table.target_table.display();
    // One round trip: the columns ('c') and the columns of every plain
    // unique index ('i', with the index).
    const PgResult r = target_.exec(
        "select 'c', a.attname, null from pg_attribute a where a.attrelid = to_regclass($1) and a.attnum > 0"
        " and not a.attisdropped"
        " union all"
        " select 'i', a.attname, i.indexrelid::text from pg_index i"
        " join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)"
        " where i.indrelid = to_regclass($1) and i.indisunique and i.indpred is null and i.indexprs is null",
        {table.target_table.quoted()});
    std::set<std::string> present;
    for (int i = 0; i < r.rows(); ++i) {
      if (r.text(i, 0) == "c") present.insert(r.text(i, 1));
    }
    if (present.empty()) return permanent_error("target table " + name + " does not exist (create it before loading)");
    for (const std::string& c : source.columns) {
      if (!present.count(c)) return permanent_error("target table " + name + " has no column " + c);
    }
    std::map<std::string, std::set<std::string>> unique_columns;
    for (int i = 0; i < r.rows(); ++i) {
      if (r.text(i, 0) == "i") unique_columns[r.text(i, 2)].insert(r.text(i, 1));
    }
    const std::set<std::string> key(table.key.begin(), table.key.end());
    const bool has_key = std::any_of(unique_columns.begin(), unique_columns.end(),
                                     [&](const auto& entry) { return entry.second == key; });
    if (!has_key) {
      std::string list;
      for (const auto& k : table.key) list += (list.empty() ? "" : ", ") + k;
      return permanent_error("target table " + name + " has no unique index or primary key on exactly (" + list + ")");
    }
    return ok_status();
  } catch (const PgError& e) {
    return e.as_error();
  }
}

Result<ChunkCounts> PgTarget::load_chunk(const TableConfig& table, const SourceTable& source,
                                         const ChunkRequest& request) {
  const LoadStatements sql = build_load_statements(table, source.columns, request.window);
  return in_transaction(
      [&] {
        // An empty target takes the rows straight from COPY: a first load
        // runs at COPY speed. Only then is the table locked (and checked
        // again), to keep it empty until we commit; the usual upsert takes
        // no table lock, so it never blocks other writers or autovacuum.
        // None of it happens for a window without rows.
        bool staged = false;
        ChunkCounts counts;
        counts.rows_read = target_.copy_from(
            source_.connection(), sql.copy_out,
            [&] {
              bool empty = target_.exec(sql.target_is_empty).boolean(0, 0);
              if (empty) {
                target_.exec(sql.lock_target);
                empty = target_.exec(sql.target_is_empty).boolean(0, 0);
              }
              if (empty) return sql.copy_into_target;
              target_.exec(sql.create_stage);
              staged = true;
              return sql.copy_into_stage;
            },
            cancel_);
        counts.rows_written = staged ? target_.exec(sql.upsert).affected() : counts.rows_read;
        return counts;
      },
      [&](PgConnection& tx, const ChunkCounts& counts) { state_.record_chunk(tx, request, counts); });
}

Result<ChunkCounts> PgTarget::in_transaction(const std::function<ChunkCounts()>& write,
                                             const std::function<void(PgConnection&, const ChunkCounts&)>& record) {
  try {
    target_.exec("BEGIN");
    step(ChunkStep::BeforeTargetWrite);
    const ChunkCounts counts = write();
    step(ChunkStep::AfterTargetWrite);
    commit_with_state([&](PgConnection& tx) { record(tx, counts); });
    step(ChunkStep::AfterCommit);
    return counts;
  } catch (const PgError& e) {
    target_.rollback_quietly();
    return e.as_error();
  } catch (const std::exception& e) {
    target_.rollback_quietly();
    return Error{e.what()};
  }
}

void PgTarget::commit_with_state(const std::function<void(PgConnection&)>& record_state) {
  if (state_shares_connection()) {
    record_state(target_);
    target_.exec("COMMIT");
    return;
  }
  // Separate state database: the load commits first; if the state update
  // then fails, the next run writes the same rows again, which the keyed
  // write (or the partition's delete + insert) makes harmless.
  target_.exec("COMMIT");
  PgConnection& state = state_.connection();
  try {
    state.exec("BEGIN");
    record_state(state);
    state.exec("COMMIT");
  } catch (...) {
    state.rollback_quietly();
    throw;
  }
}

Result<ChunkCounts> PgTarget::write_partition(const TableConfig& table, const PartitionRequest& request) {
  constexpr Oid kDateOid = 1082;
  constexpr Oid kTimestampOid = 1114;
  constexpr Oid kTimestampTzOid = 1184;
  // $1 and $2 take the partition column's own type: a local date, a local
  // wall-clock time, or an instant.
  PgParams params;
  std::vector<Oid> types;
  std::string cast;
  try {
    const std::string name = table.target_table.display();
    const std::string& column = table.partition->column;
    const PgResult type = target_.exec(
        "select format_type(a.atttypid, a.atttypmod) from pg_attribute a"
        " where a.attrelid = to_regclass($1) and a.attname = $2 and a.attnum > 0 and not a.attisdropped",
        {table.target_table.quoted(), column});
    if (type.rows() == 0) return permanent_error("target table " + name + " does not exist or has no column " + column);
    const auto column_type = cursor_type_from_postgres(type.text(0, 0));
    if (!column_type || *column_type == CursorType::Integer) {
      return permanent_error("partition column " + column + " of " + name + " has type " + type.text(0, 0) +
                   "; it must be timestamptz, timestamp or date");
    }
    switch (*column_type) {
      case CursorType::Date:
        if (request.hourly) return permanent_error("partition column " + column + " is a date; hour partitions need a timestamp");
        params = {request.lo_date, request.hi_date};
        types = {kDateOid, kDateOid};
        cast = "date";
        break;
      case CursorType::Timestamp:
        params = {request.lo_local, request.hi_local};
        types = {kTimestampOid, kTimestampOid};
        cast = "timestamp";
        break;
      default:
        params = {format_instant(request.window.lo), format_instant(request.window.hi)};
        types = {kTimestampTzOid, kTimestampTzOid};
        cast = "timestamptz";
    }
  } catch (const PgError& e) {
    return e.as_error();
  }
  // Every row must fall inside the partition, checked on the source as the
  // rows stream (an extra boolean column, not copied): a query that
  // ignores $1 and $2 would otherwise load rows of other partitions,
  // which this partition's delete never removes and a rerun duplicates.
  const std::string& column = table.partition->column;
  const std::string quoted_column = quote_identifier(column);
  const std::string wrapper = "select q.*, coalesce(q." + quoted_column + " >= $1 and q." + quoted_column +
                              " < $2, false) from (\n";
  const std::string query = wrapper + without_trailing_semicolons(table.query) + "\n) q";
  const std::string partition = "partition [" + params[0].value_or("") + ", " + params[1].value_or("") + ") of " +
                                request.table.display() + " (" + table.target_table.display() + ")";
  CopyRowCheck inside;
  inside.column = column;
  inside.describe = [&](const std::optional<std::string>& value) {
    return partition + ": the query returned a row with " + column + " " + (value ? "= " + *value : "NULL") +
           ", outside the partition; a partition query must return only rows with " + column +
           " >= $1 and < $2; nothing was written";
  };
  return in_transaction(
      [&] {
        target_.exec("DELETE FROM " + table.target_table.quoted() + " WHERE " + quoted_column + " >= $1::" + cast +
                         " AND " + quoted_column + " < $2::" + cast,
                     params);
        ChunkCounts counts;
        try {
          counts.rows_read = target_.copy_query_into(source_.connection(), query, params, types,
                                                     table.target_table.quoted(), cancel_, &inside);
        } catch (const PgError& e) {
          // An error inside the check itself, not in the configured query.
          if (e.position() <= 0 || e.position() > characters(wrapper)) throw;
          if (e.sqlstate() == "42703") {
            throw PgError(partition + ": the query returns no column " + column +
                          " (partition.column), so its rows cannot be checked against the partition");
          }
          throw PgError(partition + ": the query's column " + column + " cannot be compared with the partition's " +
                        cast + " bounds: " + e.what());
        }
        counts.rows_written = counts.rows_read;
        return counts;
      },
      [&](PgConnection& tx, const ChunkCounts& counts) { state_.record_partition(tx, request, counts); });
}

}  // namespace tidemark
