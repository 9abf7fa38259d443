#include "daemon/pg_source.h"

#include <algorithm>

#include "core/sql_identifier.h"

namespace tidemark {
namespace {

// A SQL expression turning `expr` (of the cursor's type) into the integer
// CursorValue::raw holds.
std::string raw_of(CursorType type, const std::string& expr) {
  switch (type) {
    case CursorType::TimestampTz:
    case CursorType::Timestamp: return "(extract(epoch from " + expr + ") * 1000000)::bigint";
    case CursorType::Date: return "(" + expr + " - date '1970-01-01')";
    case CursorType::Integer: return "(" + expr + ")::bigint";
  }
  return expr;
}

std::optional<CursorValue> optional_value(const PgResult& r, CursorType type) {
  if (r.is_null(0, 0)) return std::nullopt;
  return CursorValue{type, r.integer(0, 0)};
}

}  // namespace

Result<SourceTable> PgSource::inspect(const TableConfig& table) {
  try {
    const std::string name = table.source_table->display();
    const PgResult r = connection_.exec(
        "select a.attname, format_type(a.atttypid, a.atttypmod), c.oid is not null"
        " from (select to_regclass($1) as oid) c"
        " left join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped"
        " order by a.attnum",
        {table.source_table->quoted()});
    if (r.rows() == 0 || r.is_null(0, 0)) {
      return Error{"source table " + name + " does not exist (or is not visible to this role)"};
    }
    SourceTable out;
    std::vector<std::string> all;
    std::string cursor_type;
    for (int i = 0; i < r.rows(); ++i) {
      all.push_back(r.text(i, 0));
      if (all.back() == table.cursor) cursor_type = r.text(i, 1);
    }
    if (cursor_type.empty()) return Error{"source table " + name + " has no cursor column " + table.cursor};
    const auto type = cursor_type_from_postgres(cursor_type);
    if (!type) return Error{"source table " + name + ": " + type.error()};
    out.cursor_type = *type;
    if (table.columns.empty()) {
      out.columns = all;
    } else {
      for (const std::string& c : table.columns) {
        if (std::find(all.begin(), all.end(), c) == all.end()) {
          return Error{"source table " + name + " has no column " + c};
        }
      }
      out.columns = table.columns;
    }
    for (const std::string& k : table.key) {
      if (std::find(out.columns.begin(), out.columns.end(), k) == out.columns.end()) {
        return Error{"source table " + name + " has no key column " + k};
      }
    }
    return out;
  } catch (const PgError& e) {
    return Error{e.what()};
  }
}

Result<std::optional<CursorValue>> PgSource::upper_bound(const TableConfig& table, CursorType type) {
  try {
    if (type == CursorType::Integer) {
      const std::string cursor = quote_identifier(table.cursor);
      return optional_value(
          connection_.exec("select max(" + cursor + ")::bigint + 1 from " + table.source_table->quoted()), type);
    }
    if (!visibility_checked_) {
      visibility_checked_ = true;
      const bool sees_all = connection_
                                .exec("select r.rolsuper or pg_has_role(current_user, 'pg_monitor', 'member')"
                                      " from pg_roles r where r.rolname = current_user")
                                .boolean(0, 0);
      if (!sees_all && warn_) {
        warn_("source " + connection_.label() +
              ": this role cannot see other sessions' open transactions (grant it pg_monitor); the window's upper "
              "bound is the source clock alone, and rows committed late rely on lookback");
      }
    }
    // hi: the source's clock, lowered to the start of the oldest open
    // transaction holding an xid, whose rows may still land below it.
    const std::string hi =
        "least(clock_timestamp(), (select min(xact_start) from pg_stat_activity where backend_xid is not null"
        " and datname = current_database() and pid <> pg_backend_pid()))";
    std::string expr = hi;
    if (type == CursorType::Timestamp) expr = "(" + hi + ")::timestamp";  // the source session's time zone
    if (type == CursorType::Date) expr = "(" + hi + ")::date";
    return optional_value(connection_.exec("select " + raw_of(type, expr)), type);
  } catch (const PgError& e) {
    return Error{e.what()};
  }
}

Result<std::optional<CursorValue>> PgSource::lower_bound(const TableConfig& table, CursorType type) {
  try {
    const std::string min = "min(" + quote_identifier(table.cursor) + ")";
    return optional_value(connection_.exec("select " + raw_of(type, min) + " from " + table.source_table->quoted()),
                          type);
  } catch (const PgError& e) {
    return Error{e.what()};
  }
}

Result<Instant> PgSource::clock() {
  try {
    const PgResult r = connection_.exec("select floor(extract(epoch from clock_timestamp()))::bigint");
    return Instant(std::chrono::seconds(r.integer(0, 0)));
  } catch (const PgError& e) {
    return Error{e.what()};
  }
}

}  // namespace tidemark
