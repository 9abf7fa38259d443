#include "core/sql/verify_statements.h"

namespace tidemark {
namespace {

// count(*) and the order-independent checksum of the rows' `columns`, as
// the select list of a query over `prefix`-qualified columns.
std::string count_and_checksum(const std::vector<std::string>& columns, const std::string& prefix) {
  std::string row_text;
  for (const std::string& column : columns) {
    row_text += (row_text.empty() ? "" : ", ") + std::string("coalesce(") + prefix + quote_identifier(column) +
                "::text, '\\N')";
  }
  return "count(*), coalesce(sum(hashtextextended(concat_ws(E'\\x1f', " + row_text + "), 0)::numeric), 0)::text";
}

}  // namespace

std::string verify_query(const QualifiedName& table, const std::vector<std::string>& columns,
                         const std::string& cursor, const Window& window, const std::string& timezone) {
  const std::string c = quote_identifier(cursor);
  std::string bucket;
  switch (window.lo.type) {
    case CursorType::TimestampTz:
      bucket = "(" + c + " at time zone " + quote_literal(timezone) + ")::date::text";
      break;
    case CursorType::Timestamp: bucket = c + "::date::text"; break;
    case CursorType::Date: bucket = c + "::text"; break;
    case CursorType::Integer: bucket = "'all'"; break;
  }
  return "SELECT " + bucket + " AS bucket, " + count_and_checksum(columns, "") + " FROM " + table.quoted() +
         " WHERE " + cursor_range_predicate(c, window.lo, window.hi) + " GROUP BY 1 ORDER BY 1";
}

PartitionVerifyQueries partition_verify_queries(const TableConfig& table, const std::vector<std::string>& columns,
                                                const std::string& cast) {
  const std::string column = quote_identifier(table.partition->column);
  PartitionVerifyQueries q;
  q.source = "SELECT " + count_and_checksum(columns, "q.") + " FROM (\n" + without_trailing_semicolons(table.query) +
             "\n) q";
  q.target = "SELECT " + count_and_checksum(columns, "") + " FROM " + table.target_table.quoted() + " WHERE " +
             column + " >= $1::" + cast + " AND " + column + " < $2::" + cast;
  return q;
}

}  // namespace tidemark
