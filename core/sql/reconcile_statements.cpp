#include "core/sql/reconcile_statements.h"

#include <algorithm>
#include <cstdlib>

#include "core/text/sql_identifier.h"
#include "core/text/json_text.h"

namespace tidemark {
namespace {

// The bucket of a key text, non-negative, out of `count` (an SQL bigint).
std::string bucket_of(const std::string& count) {
  return "((hashtextextended(tm_key, 0) & 9223372036854775807) % " + count + ")";
}

// The listing's bucket count and bucket list as literals made of digits.
struct Numbers {
  std::string count = "$1::bigint";
  std::string which = "$2::bigint[]";
};

Numbers literal_numbers(std::int64_t buckets, const std::vector<std::int64_t>& which) {
  Numbers out;
  out.count = "(" + std::to_string(buckets) + "::bigint)";
  out.which = "ARRAY[";
  for (std::size_t i = 0; i < which.size(); ++i) out.which += (i ? "," : "") + std::to_string(which[i]);
  out.which += "]::bigint[]";
  return out;
}

std::string key_row(const std::vector<std::string>& key, const std::string& alias) {
  std::string out = "ROW(";
  for (std::size_t i = 0; i < key.size(); ++i) out += (i ? ", " : "") + alias + "." + quote_identifier(key[i]);
  return out + ")::text";
}

// Each key column as its own type, not as text: a listing is computed
// when it is declared, with the session's time zone at UTC (for tm_key),
// but its key columns are printed as they are fetched, in the session's
// own time zone by then, as a load reads them.
std::string key_select_list(const std::vector<std::string>& key, const std::string& alias) {
  std::string out;
  for (std::size_t i = 0; i < key.size(); ++i) {
    out += ", " + alias + "." + quote_identifier(key[i]) + " AS tm_c" + std::to_string(i);
  }
  return out;
}

std::string key_columns_out(const std::vector<std::string>& key) {
  std::string out;
  for (std::size_t i = 0; i < key.size(); ++i) out += ", tm_c" + std::to_string(i);
  return out;
}

KeySideQueries side_queries(const TableConfig& table, const QualifiedName& name, const std::string& compared,
                            const std::string& flag, const std::string& row_hash, const Numbers& n = Numbers{}) {
  const std::string from = name.quoted() + " q";
  KeySideQueries out;
  out.estimate =
      "SELECT coalesce((SELECT greatest(c.reltuples, 0)::bigint FROM pg_class c WHERE c.oid = to_regclass($1)), 0)";
  // A bucket's checksum covers each row's key and its hash: a row that
  // changed under the same key makes its bucket differ as a key that
  // came or went does.
  out.bucket_sums = "SELECT " + bucket_of(n.count) +
                    " AS tm_bucket, count(*), sum(hashtextextended(tm_key || ' ' || tm_row::text, 1))::text FROM "
                    "(SELECT " +
                    key_row(table.key, "q") + " AS tm_key, " + row_hash + " AS tm_row FROM " + from + " WHERE " +
                    compared + ") k GROUP BY 1";
  out.keys = std::string("SELECT tm_bucket, tm_key, tm_flag, tm_row") + key_columns_out(table.key) +
             " FROM (SELECT " + bucket_of(n.count) + " AS tm_bucket, k.* FROM (SELECT " + key_row(table.key, "q") +
             " AS tm_key, (" + flag + ") IS TRUE AS tm_flag, " + row_hash + " AS tm_row" +
             key_select_list(table.key, "q") + " FROM " + from + ") k) b WHERE tm_bucket = ANY(" + n.which +
             ") ORDER BY tm_bucket, tm_key COLLATE \"C\"";
  return out;
}

std::string json_string(const std::string& text) { return "\"" + json_escape(text) + "\""; }

// t.k1 = d.k1 AND t.k2 IS NOT DISTINCT FROM d.k2 (a key of the batch is NULL in k2)
std::string key_match(const std::vector<std::string>& key, const std::vector<KeyColumnType>& types,
                      const std::string& a, const std::string& b) {
  if (types.size() != key.size()) std::abort();  // a type for each key column
  std::string out;
  for (std::size_t i = 0; i < key.size(); ++i) {
    const std::string k = quote_identifier(key[i]);
    out += (out.empty() ? "" : " AND ") + a + "." + k + (types[i].holds_null ? " IS NOT DISTINCT FROM " : " = ") + b +
           "." + k;
  }
  return out;
}

}  // namespace

KeySideQueries source_key_queries(const TableConfig& table, const CursorValue& watermark,
                                  const std::string& row_hash) {
  const std::string below = "q." + quote_identifier(table.cursor) + " < " + cursor_sql_literal(watermark);
  return side_queries(table, *table.source_table, below, below, row_hash);
}

KeySideQueries target_key_queries(const TableConfig& table, const std::string& mark_column,
                                  const std::string& row_hash) {
  if (mark_column.empty()) return side_queries(table, table.target_table, "true", "false", row_hash);
  const std::string mark = "q." + quote_identifier(mark_column);
  return side_queries(table, table.target_table, mark + " IS NULL", mark + " IS NOT NULL", row_hash);
}

std::string source_key_listing(const TableConfig& table, const CursorValue& watermark, const std::string& row_hash,
                               std::int64_t buckets, const std::vector<std::int64_t>& which) {
  const std::string below = "q." + quote_identifier(table.cursor) + " < " + cursor_sql_literal(watermark);
  return side_queries(table, *table.source_table, below, below, row_hash, literal_numbers(buckets, which)).keys;
}

std::string target_key_listing(const TableConfig& table, const std::string& mark_column, const std::string& row_hash,
                               std::int64_t buckets, const std::vector<std::int64_t>& which) {
  const Numbers n = literal_numbers(buckets, which);
  if (mark_column.empty()) return side_queries(table, table.target_table, "true", "false", row_hash, n).keys;
  const std::string mark = "q." + quote_identifier(mark_column);
  return side_queries(table, table.target_table, mark + " IS NULL", mark + " IS NOT NULL", row_hash, n).keys;
}

bool keys_hold_null(const std::vector<KeyRow>& keys, std::size_t column) {
  return std::any_of(keys.begin(), keys.end(),
                     [&](const KeyRow& k) { return column < k.columns.size() && !k.columns[column]; });
}

std::string keys_json(const std::vector<std::string>& key_columns, const std::vector<KeyRow>& keys) {
  std::string out = "[";
  for (std::size_t r = 0; r < keys.size(); ++r) {
    out += r ? ",{" : "{";
    for (std::size_t c = 0; c < key_columns.size(); ++c) {
      out += (c ? "," : "") + json_string(key_columns[c]) + ":";
      const auto& value = c < keys[r].columns.size() ? keys[r].columns[c] : std::nullopt;
      out += value ? json_string(*value) : std::string("null");
    }
    out += "}";
  }
  return out + "]";
}

namespace {

// The column definitions of a record of the key columns, each as its type
// on one side. Only the key columns are read from the keys' JSON: a record
// of the whole row type would hold NULL in every other column, which a NOT
// NULL domain there refuses.
std::string key_record(const std::vector<std::string>& key, const std::vector<KeyColumnType>& types) {
  if (types.size() != key.size()) std::abort();  // a type for each key column
  std::string columns;
  for (std::size_t i = 0; i < key.size(); ++i) {
    columns += (i ? ", " : "") + quote_identifier(key[i]) + " " + types[i].type;
  }
  return columns;
}

}  // namespace

std::string held_keys(const TableConfig& table, const QualifiedName& name, const std::vector<KeyColumnType>& key_types,
                      const std::string& mark_column) {
  const std::string unmarked = mark_column.empty() ? "" : " AND q." + quote_identifier(mark_column) + " IS NULL";
  return "SELECT e.i FROM json_array_elements($1::json) WITH ORDINALITY e(v, i) WHERE EXISTS (SELECT 1 FROM " +
         name.quoted() + " q, json_to_record(e.v) AS d(" + key_record(table.key, key_types) + ") WHERE " +
         key_match(table.key, key_types, "q", "d") + unmarked + ") ORDER BY e.i";
}

std::string delete_keys_statement(const TableConfig& table, const std::vector<KeyColumnType>& key_types) {
  return "DELETE FROM " + table.target_table.quoted() + " t USING json_to_recordset($1::json) AS d(" +
         key_record(table.key, key_types) + ") WHERE " + key_match(table.key, key_types, "t", "d");
}

std::string rows_of_keys_from(const TableConfig& table, const QualifiedName& name,
                              const std::vector<std::string>& columns, const std::vector<KeyColumnType>& key_types) {
  std::string cols;
  for (const std::string& c : columns) cols += (cols.empty() ? "" : ", ") + std::string("s.") + quote_identifier(c);
  return "(SELECT " + cols + " FROM json_to_recordset($1::json) AS d(" + key_record(table.key, key_types) + ") JOIN " +
         name.quoted() + " s ON " + key_match(table.key, key_types, "s", "d") + ") tm_keyed";
}

std::string rows_of_keys_statement(const TableConfig& table, const std::vector<std::string>& columns,
                                   const std::vector<KeyColumnType>& key_types) {
  std::string cols;
  for (const std::string& c : columns) cols += (cols.empty() ? "" : ", ") + quote_identifier(c);
  return "SELECT " + cols + " FROM " + rows_of_keys_from(table, *table.source_table, columns, key_types);
}

ReconcileStatements reconcile_statements(const TableConfig& table, const std::vector<std::string>& columns,
                                         const std::string& mark_column, const CursorValue& watermark,
                                         const KeyTypes& key_types) {
  const std::string target = table.target_table.quoted();
  const std::string source = table.source_table->quoted();
  const std::string keys_of = "json_to_recordset($1::json) AS d(" + key_record(table.key, key_types.target) + ")";
  ReconcileStatements s;
  s.delete_keys = delete_keys_statement(table, key_types.target);
  if (!mark_column.empty()) {
    s.mark_keys = "UPDATE " + target + " t SET " + quote_identifier(mark_column) + " = now() FROM " + keys_of +
                  " WHERE " + key_match(table.key, key_types.target, "t", "d") + " AND t." + quote_identifier(mark_column) +
                  " IS NULL";
  }
  std::string cols;
  for (const std::string& c : columns) cols += (cols.empty() ? "" : ", ") + std::string("s.") + quote_identifier(c);
  s.copy_source = "SELECT " + cols + " FROM " + source + " s WHERE s." + quote_identifier(table.cursor) + " < " +
                  cursor_sql_literal(watermark) + " AND EXISTS (SELECT 1 FROM json_to_recordset($1::json) AS d(" +
                  key_record(table.key, key_types.source) + ") WHERE " + key_match(table.key, key_types.source, "s", "d") +
                  ")";
  return s;
}

}  // namespace tidemark
