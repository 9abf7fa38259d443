#include "core/sql/verify_statements.h"

namespace tidemark {

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
  std::string row_text;
  for (const std::string& column : columns) {
    row_text += (row_text.empty() ? "" : ", ") + std::string("coalesce(") + quote_identifier(column) +
                "::text, '\\N')";
  }
  return "SELECT " + bucket + " AS bucket, count(*), coalesce(sum(hashtextextended(concat_ws(E'\\x1f', " + row_text +
         "), 0)::numeric), 0)::text FROM " + table.quoted() + " WHERE " + cursor_range_predicate(c, window.lo, window.hi) +
         " GROUP BY 1 ORDER BY 1";
}

}  // namespace tidemark
