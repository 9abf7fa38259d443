#include "core/sql/row_hash_statements.h"

#include <algorithm>
#include <cstdlib>

#include "core/text/sql_identifier.h"
#include "core/watermark/cursor_value.h"

namespace tidemark {
namespace {

const FingerprintColumn& key_column(const std::vector<FingerprintColumn>& columns, const std::string& name) {
  const auto found = std::find_if(columns.begin(), columns.end(), [&](const FingerprintColumn& c) { return c.name == name; });
  if (found == columns.end()) std::abort();  // the key is among the loaded columns
  return *found;
}

// SELECT each key column as the diff reads it and `hash` FROM `from`,
// in the diff's key order.
std::string ordered_select(const std::string& from, const std::vector<FingerprintColumn>& keys,
                           const std::vector<KeyOrder>& order, const std::string& hash, const std::string& where) {
  std::string select;
  std::string order_by;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::string name = quote_identifier(keys[i].name);
    const bool uuid = keys[i].source_type == "uuid" && keys[i].target_type == "uuid";
    const bool own_order = order[i] == KeyOrder::Integer || uuid;
    select += (order[i] == KeyOrder::Integer ? name + "::bigint" : name + "::text") + ", ";
    order_by += (i ? ", " : "") + (own_order ? name : name + "::text COLLATE \"C\"");
  }
  return "SELECT " + select + hash + " FROM " + from + (where.empty() ? "" : " WHERE " + where) + " ORDER BY " +
         order_by;
}

std::string side(const QualifiedName& table, const std::vector<FingerprintColumn>& keys,
                 const std::vector<KeyOrder>& order, const std::string& hash, const std::string& where) {
  return "COPY (" + ordered_select(table.quoted(), keys, order, hash, where) + ") TO STDOUT (FORMAT binary)";
}

// The table's key columns among `columns`, and each one's KeyOrder.
std::vector<FingerprintColumn> key_columns(const TableConfig& table, const std::vector<FingerprintColumn>& columns,
                                           std::vector<KeyOrder>& order) {
  std::vector<FingerprintColumn> keys;
  for (const std::string& k : table.key) {
    const FingerprintColumn& c = key_column(columns, k);
    order.push_back(key_order(c));
    keys.push_back(c);
  }
  return keys;
}

}  // namespace

KeyOrder key_order(const FingerprintColumn& column) {
  return is_integer_type(column.source_type) && is_integer_type(column.target_type) ? KeyOrder::Integer : KeyOrder::Bytes;
}

RowHashStatements row_hash_statements(const TableConfig& table, const std::vector<FingerprintColumn>& columns,
                                      bool hash_record, const std::string& where) {
  RowHashStatements out;
  const std::vector<FingerprintColumn> keys = key_columns(table, columns, out.order);
  const std::string hash = row_hash_sql(columns, hash_record);
  out.source = side(*table.source_table, keys, out.order, hash, where);
  out.target = side(table.target_table, keys, out.order, hash, where);
  return out;
}

namespace {

std::string digits(std::int64_t n) { return "(" + std::to_string(n) + ")::bigint"; }

// Each block's rows through the key's index, a range each, in block
// order: no sort of the table's rows, whose grouping the planner would
// think has as many groups as rows. Empty blocks come too (0, 0). A
// block's end is its start plus the width: (b + 1) * width alone passes
// the largest bigint in a range from the smallest one, where the end
// does not.
std::string block_side(const QualifiedName& table, const std::string& key, const std::string& rows_hash,
                       const KeyBlocks& blocks) {
  const std::string sums = "SELECT " + rows_hash + " # count(*), count(*) FROM " + table.quoted();
  const std::string start = digits(blocks.origin) + " + tm_block * " + digits(blocks.width);
  return "COPY (SELECT tm_block, s.* FROM generate_series(0::bigint, " + digits(blocks.count - 1) +
         ") AS tm_b(tm_block) CROSS JOIN LATERAL (" + sums + " WHERE " + key + " >= " + start + " AND " + key + " < " +
         start + " + " + digits(blocks.width) + ") s UNION ALL SELECT NULL, n.* FROM (" + sums + " WHERE " + key +
         " IS NULL) n ORDER BY 1) TO STDOUT (FORMAT binary)";
}

// The rows of the chosen blocks in one pass over the table: a block
// number per row tested against the list (hashed by the server), the row
// hashed only when it passes. A range of the key's index per block would
// leave the plan to the planner's guess at each range's size.
std::string rows_in_side(const QualifiedName& table, const std::string& key, const std::string& hash,
                         const KeyBlocks& blocks, const std::vector<std::int64_t>& which, bool null_block) {
  std::string list = "ARRAY[";
  for (std::size_t i = 0; i < which.size(); ++i) list += (i ? "," : "") + std::to_string(which[i]);
  list += "]::bigint[]";
  std::string where = "(" + key + "::bigint - " + digits(blocks.origin) + ") / " + digits(blocks.width) +
                      " = ANY(" + list + ")";
  if (null_block) where += " OR " + key + " IS NULL";
  return "COPY (SELECT " + key + "::bigint, " + hash + " FROM " + table.quoted() + " WHERE " + where +
         " ORDER BY 1) TO STDOUT (FORMAT binary)";
}

}  // namespace

std::string key_range_statement(const QualifiedName& table, const std::string& key) {
  const std::string k = quote_identifier(key);
  return "SELECT min(" + k + ")::bigint::text, max(" + k + ")::bigint::text FROM " + table.quoted();
}

RowHashStatements block_statements(const TableConfig& table, const std::vector<FingerprintColumn>& columns,
                                   bool hash_record, const KeyBlocks& blocks) {
  if (table.key.size() != 1) std::abort();  // blocks cut one integer key
  const std::string key = quote_identifier(table.key[0]);
  const std::string rows_hash = rows_hash_sql(columns, hash_record);
  RowHashStatements out;
  out.order = {KeyOrder::Integer};
  out.source = block_side(*table.source_table, key, rows_hash, blocks);
  out.target = block_side(table.target_table, key, rows_hash, blocks);
  return out;
}

RowHashStatements row_hash_statements_in(const TableConfig& table, const std::vector<FingerprintColumn>& columns,
                                         bool hash_record, const KeyBlocks& blocks,
                                         const std::vector<std::int64_t>& which, bool null_block) {
  if (table.key.size() != 1) std::abort();  // blocks cut one integer key
  const std::string key = quote_identifier(table.key[0]);
  const std::string hash = row_hash_sql(columns, hash_record);
  RowHashStatements out;
  out.order = {KeyOrder::Integer};
  out.source = rows_in_side(*table.source_table, key, hash, blocks, which, null_block);
  out.target = rows_in_side(table.target_table, key, hash, blocks, which, null_block);
  return out;
}

RowHashStatements recent_key_statements(const TableConfig& table, const std::vector<FingerprintColumn>& columns,
                                        const SnapshotHorizon& since, std::int64_t most) {
  RowHashStatements out;
  const std::vector<FingerprintColumn> keys = key_columns(table, columns, out.order);
  std::string names;
  for (const FingerprintColumn& k : keys) names += (names.empty() ? "" : ", ") + quote_identifier(k.name);
  // age() counts back from the current transaction id, the same for both
  // sides of the comparison: an xmin at or after the horizon is no older.
  // A row frozen long ago keeps its xmin, whose age wraps below 0 once
  // 2^31 transactions have passed: not recent. The horizon's age is a
  // subquery, computed once (age() is only stable). The limit sits
  // inside, so that the scan stops there and the sort takes only what it
  // found.
  const auto recent = [&](const QualifiedName& table_name, std::int64_t horizon) {
    const std::string from = "(SELECT " + names + " FROM " + table_name.quoted() +
                             " WHERE age(xmin) BETWEEN 0 AND (SELECT age('" + std::to_string(xid32(horizon)) +
                             "'::xid)) LIMIT " + std::to_string(most) + ") tm_recent";
    return "COPY (" + ordered_select(from, keys, out.order, "0::bigint", {}) + ") TO STDOUT (FORMAT binary)";
  };
  out.source = recent(*table.source_table, since.source);
  out.target = recent(table.target_table, since.target);
  return out;
}

RowHashStatements keyed_hash_statements(const TableConfig& table, const std::vector<FingerprintColumn>& columns,
                                        const std::vector<KeyColumnType>& source_keys,
                                        const std::vector<KeyColumnType>& target_keys) {
  RowHashStatements out;
  const std::vector<FingerprintColumn> keys = key_columns(table, columns, out.order);
  const std::string mixed = mixed_row_hash_sql(columns, /*hash_record=*/true);
  std::vector<std::string> names;
  for (const FingerprintColumn& c : columns) names.push_back(c.name);
  out.source =
      ordered_select(rows_of_keys_from(table, *table.source_table, names, source_keys), keys, out.order, mixed, {});
  out.target =
      ordered_select(rows_of_keys_from(table, table.target_table, names, target_keys), keys, out.order, mixed, {});
  return out;
}

RowHashStatements multiset_statements(const TableConfig& table, const std::vector<FingerprintColumn>& columns,
                                      bool hash_record, const std::string& where) {
  const std::string hash = row_hash_sql(columns, hash_record);
  const std::string limited = where.empty() ? "" : " WHERE " + where;
  const auto side = [&](const QualifiedName& name) {
    return "COPY (SELECT tm_hash, count(*), count(*) FROM (SELECT " + hash + " AS tm_hash FROM " + name.quoted() +
           limited + ") tm_rows GROUP BY tm_hash ORDER BY tm_hash) TO STDOUT (FORMAT binary)";
  };
  RowHashStatements out;
  out.order = {KeyOrder::Integer};
  out.source = side(*table.source_table);
  out.target = side(table.target_table);
  return out;
}

std::string hashes_array(const std::vector<std::int64_t>& hashes, std::size_t at, std::size_t most) {
  std::string out = "{";
  for (std::size_t i = at; i < hashes.size() && i - at < most; ++i) {
    out += (i == at ? "" : ",") + std::to_string(hashes[i]);
  }
  return out + "}";
}

RowsOfHashes rows_of_hashes_statements(const TableConfig& table, const std::vector<FingerprintColumn>& columns,
                                       bool hash_record) {
  const std::string hash = row_hash_sql(columns, hash_record);
  std::string names;
  for (const FingerprintColumn& c : columns) names += (names.empty() ? "" : ", ") + quote_identifier(c.name);
  RowsOfHashes out;
  out.delete_target = "DELETE FROM " + table.target_table.quoted() + " WHERE " + hash + " = ANY($1::bigint[])";
  out.select_source =
      "SELECT " + names + " FROM " + table.source_table->quoted() + " WHERE " + hash + " = ANY($1::bigint[])";
  const auto counted = [&](const QualifiedName& name) {
    return "SELECT ROW(" + names + ")::text, count(*) FROM " + name.quoted() + " WHERE " + hash +
           " = ANY($1::bigint[]) GROUP BY 1 ORDER BY 1";
  };
  out.counted_source = counted(*table.source_table);
  out.counted_target = counted(table.target_table);
  return out;
}

}  // namespace tidemark
