#include "core/sql/row_hash_statements.h"

#include <algorithm>
#include <cstdlib>

#include "core/text/sql_identifier.h"

namespace tidemark {
namespace {

bool is_integer(const std::string& type) { return type == "smallint" || type == "integer" || type == "bigint"; }

const FingerprintColumn& key_column(const std::vector<FingerprintColumn>& columns, const std::string& name) {
  const auto found = std::find_if(columns.begin(), columns.end(), [&](const FingerprintColumn& c) { return c.name == name; });
  if (found == columns.end()) std::abort();  // the key is among the loaded columns
  return *found;
}

std::string side(const QualifiedName& table, const std::vector<FingerprintColumn>& keys,
                 const std::vector<KeyOrder>& order, const std::string& hash) {
  std::string select;
  std::string order_by;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::string name = quote_identifier(keys[i].name);
    const bool uuid = keys[i].source_type == "uuid" && keys[i].target_type == "uuid";
    const bool own_order = order[i] == KeyOrder::Integer || uuid;
    select += (order[i] == KeyOrder::Integer ? name + "::bigint" : name + "::text") + ", ";
    order_by += (i ? ", " : "") + (own_order ? name : name + "::text COLLATE \"C\"");
  }
  return "COPY (SELECT " + select + hash + " FROM " + table.quoted() + " ORDER BY " + order_by +
         ") TO STDOUT (FORMAT binary)";
}

}  // namespace

KeyOrder key_order(const FingerprintColumn& column) {
  return is_integer(column.source_type) && is_integer(column.target_type) ? KeyOrder::Integer : KeyOrder::Bytes;
}

RowHashStatements row_hash_statements(const TableConfig& table, const std::vector<FingerprintColumn>& columns,
                                      bool hash_record) {
  std::vector<FingerprintColumn> keys;
  RowHashStatements out;
  for (const std::string& k : table.key) {
    const FingerprintColumn& c = key_column(columns, k);
    out.order.push_back(key_order(c));
    keys.push_back(c);
  }
  const std::string hash = row_hash_sql(columns, hash_record);
  out.source = side(*table.source_table, keys, out.order, hash);
  out.target = side(table.target_table, keys, out.order, hash);
  return out;
}

}  // namespace tidemark
