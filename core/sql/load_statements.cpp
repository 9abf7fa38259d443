#include "core/sql/load_statements.h"

#include <algorithm>

#include "core/text/sql_identifier.h"
#include "core/watermark/cursor_value.h"

namespace tidemark {
namespace {

constexpr const char* kStage = "\"tidemark_stage\"";

std::string column_list(const std::vector<std::string>& columns, const std::string& prefix = "") {
  std::string out;
  for (const std::string& c : columns) out += (out.empty() ? "" : ", ") + prefix + quote_identifier(c);
  return out;
}

// COPY of the columns' rows of `source` that meet `where` (" WHERE ...",
// or empty for all), in `format`.
std::string copy_out_statement(const std::string& cols, const std::string& source, const std::string& where,
                               CopyFormat format) {
  return "COPY (SELECT " + cols + " FROM " + source + where + ") TO STDOUT" +
         (format == CopyFormat::Binary ? " (FORMAT binary)" : "");
}

}  // namespace

std::string window_probe_statement(const TableConfig& table, const std::optional<Window>& range, CursorType type,
                                   bool never_null) {
  const std::string source = table.source_table->quoted();
  const std::string cursor = quote_identifier(table.cursor);
  const std::string has_rows =
      range ? "EXISTS (SELECT FROM " + source + " WHERE " + cursor_range_predicate(cursor, range->lo, range->hi) + ")"
            : std::string("true");
  const bool integer = type == CursorType::Integer;
  const std::string infinite = integer ? std::string("false") : cursor + " IN ('infinity', '-infinity')";
  std::string counts;
  if (!never_null) {
    counts = "SELECT count(*) FILTER (WHERE " + cursor + " IS NULL), count(*) FILTER (WHERE " + infinite + ") FROM " +
             source + " WHERE " + cursor + " IS NULL OR " + infinite;
  } else if (!integer) {
    counts = "SELECT 0::bigint, count(*) FROM " + source + " WHERE " + infinite;
  } else {
    counts = "SELECT 0::bigint, 0::bigint";
  }
  return "SELECT " + has_rows + ", n.* FROM (" + counts + ") n";
}

std::string range_copy_out(const TableConfig& table, const std::vector<std::string>& columns, CopyFormat format,
                           const PageRange& pages) {
  return copy_out_statement(column_list(columns), table.source_table->quoted(), " WHERE " + ctid_range_predicate(pages),
                            format);
}

LoadStatements build_load_statements(const TableConfig& table, const std::vector<std::string>& columns,
                                     const std::optional<Window>& window, CopyFormat format, RelationKind kind,
                                     const std::vector<ColumnShape>& source_catalog,
                                     const std::vector<ColumnShape>& target_catalog) {
  const std::string options = format == CopyFormat::Binary ? " (FORMAT binary)" : "";
  const std::string cols = column_list(columns);
  const std::string target = table.target_table.quoted();
  const std::string source = table.source_table->quoted();
  LoadStatements s;
  // The window's own query, planned and not run: it takes the locks the
  // COPY's query will take (the table, its partitions the window can
  // reach, a view's tables), with the privileges the COPY needs (LOCK TABLE
  // wants the whole table's, where a column grant serves a SELECT).
  const std::string where =
      window ? " WHERE " + cursor_range_predicate(quote_identifier(table.cursor), window->lo, window->hi) : "";
  if (kind != RelationKind::ForeignTable) s.lock_source = "SELECT FROM " + source + where + " LIMIT 0";
  s.source_columns = "SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a WHERE a.attrelid = " +
                     quote_literal(source) + "::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum";
  s.copy_out = copy_out_statement(cols, source, where, format);
  s.stage = kStage;
  s.lock_target = "LOCK TABLE " + target + " IN SHARE ROW EXCLUSIVE MODE";
  s.target_is_empty = "SELECT NOT EXISTS (SELECT 1 FROM " + target + ")";
  s.create_stage = std::string("CREATE TEMP TABLE ") + kStage + " ON COMMIT DROP AS SELECT " + cols + " FROM " +
                   target + " WITH NO DATA";
  s.copy_into_stage = std::string("COPY ") + kStage + " (" + cols + ") FROM STDIN" + options;

  std::vector<std::string> rest;
  for (const std::string& c : columns) {
    if (std::find(table.key.begin(), table.key.end(), c) == table.key.end()) rest.push_back(c);
  }
  // With every column in the key the upsert keeps one of rows the source
  // holds twice (DO NOTHING); COPY straight into the target would break
  // its unique index on them instead, so such a table always stages.
  if (!rest.empty()) s.copy_into_target = "COPY " + target + " (" + cols + ") FROM STDIN" + options;
  if (!window) {
    // On a hot standby the data is the primary's as of the last commit
    // replayed, which can be well behind the standby's own clock (NULL
    // when it has replayed none yet).
    s.source_clock =
        "SELECT (extract(epoch FROM CASE WHEN pg_is_in_recovery() THEN pg_last_xact_replay_timestamp() "
        "ELSE clock_timestamp() END) * 1000000)::int8";
    s.clear_target = "DELETE FROM " + target;
  }
  // Rows without a key are only ever inserted: straight from COPY (an
  // append), or after the target's rows are cleared or diffed away as
  // multisets (a snapshot, daemon/pg/data/pg_snapshot_sync.h).
  if (table.key.empty()) return s;
  s.upsert = "INSERT INTO " + target + " AS t (" + cols + ") SELECT " + cols + " FROM " + kStage +
             " ON CONFLICT (" + column_list(table.key) + ") DO ";
  // deletes with action mark: a row loaded again is in the source again,
  // so its mark is cleared, even when nothing else of it changed (else a
  // row re-inserted after it was marked would stay marked for ever).
  std::string mark;
  if (table.deletes && table.deletes->action == DeleteAction::Mark &&
      std::find(columns.begin(), columns.end(), table.deletes->mark_column) == columns.end()) {
    mark = quote_identifier(table.deletes->mark_column);
  }
  if (rest.empty() && mark.empty()) {
    s.upsert += "NOTHING";
  } else {
    // The key columns are written too: a key equal to the target's under
    // its operator but not the same value (1.0 and 1.00, 'abc' and 'ABC'
    // under a case-insensitive collation) must become the source's. A
    // table whose columns are all key keeps DO NOTHING above: rows the
    // source holds twice would make DO UPDATE touch a row twice.
    const std::vector<std::string>& written = rest.empty() ? rest : columns;
    std::string sets;
    for (const std::string& c : written) {
      sets += (sets.empty() ? "" : ", ") + quote_identifier(c) + " = EXCLUDED." + quote_identifier(c);
    }
    if (!mark.empty()) sets += (sets.empty() ? "" : ", ") + mark + " = NULL";
    // A re-read row that did not change is left alone: no new tuple, no WAL.
    // Rows are compared by the binary image of their values (what the `*=`
    // operator does), which every type has, json and point included, and
    // which sees every change: 1.0 becoming 1.00, or a case change under a
    // case-insensitive collation, is written, where `=` would call them
    // equal. It is cheaper than comparing the rows' text.
    std::string changed = written.empty() ? std::string("false")
                                          : "NOT record_image_eq(ROW(" + column_list(written, "t.") + "), ROW(" +
                                                column_list(written, "EXCLUDED.") + "))";
    // A row whose cursor moved has changed, so the whole row's image is
    // compared only where the cursor stayed, as in a re-read row: on rows
    // that changed, that comparison was about 7 % of the upsert
    // (docs/benchmarks.md). Only for a target column of a cursor type, whose
    // `=` is equality of images (a json or xml column, which a cursor's text
    // also fills, has no `=` at all), and not for a cursor that is the key
    // (it never moves on a conflict).
    const ColumnShape* target_cursor = table.cursor.empty() ? nullptr : find_column(target_catalog, table.cursor);
    if (target_cursor && cursor_type_from_postgres(target_cursor->type).ok() &&
        std::find(written.begin(), written.end(), table.cursor) != written.end() &&
        std::find(table.key.begin(), table.key.end(), table.cursor) == table.key.end()) {
      const std::string cursor = quote_identifier(table.cursor);
      changed = "t." + cursor + " IS DISTINCT FROM EXCLUDED." + cursor + " OR " + changed;
    }
    if (!mark.empty()) changed += " OR t." + mark + " IS NOT NULL";
    s.upsert += "UPDATE SET " + sets + " WHERE " + changed;
  }
  if (!window) {
    // Keys are matched with `=`, which a hash anti-join can use. A key
    // column that can hold NULL (the target's unique index then treats
    // NULLs as equal, core/run/target_fit.h) needs a NULL-safe match too,
    // asked only of the target rows that hold a NULL in the key, where
    // `=` cannot tell: the rest stay on the hash join.
    std::string equal;
    std::string same;
    std::string holds_null;
    for (const std::string& k : table.key) {
      const std::string s_k = "s." + quote_identifier(k);
      const std::string t_k = "t." + quote_identifier(k);
      equal += (equal.empty() ? "" : " AND ") + s_k + " = " + t_k;
      same += (same.empty() ? "" : " AND ") + s_k + " IS NOT DISTINCT FROM " + t_k;
      const ColumnShape* shape = find_column(source_catalog, k);
      if (shape == nullptr || !shape->not_null) holds_null += (holds_null.empty() ? "" : " OR ") + t_k + " IS NULL";
    }
    s.delete_gone = "DELETE FROM " + target + " AS t WHERE NOT EXISTS (SELECT 1 FROM " + kStage + " AS s WHERE " +
                    equal + ")";
    if (!holds_null.empty()) {
      s.delete_gone += " AND NOT ((" + holds_null + ") AND EXISTS (SELECT 1 FROM " + kStage + " AS s WHERE " + same +
                       "))";
    }
  }
  return s;
}

}  // namespace tidemark
