#include "core/sql/verify_statements.h"

#include <cstdlib>

namespace tidemark {
namespace {

// count(*) and the order-independent checksum of the rows' `columns`, as
// the select list of a query over `prefix`-qualified columns. Each row is
// the text of a row of its columns' texts, which tells a NULL from any
// text ('\N' included) and quotes what would blur the columns' bounds.
std::string count_and_checksum(const std::vector<std::string>& columns, const std::string& prefix) {
  std::string row_text;
  for (const std::string& column : columns) {
    row_text += (row_text.empty() ? "" : ", ") + prefix + quote_identifier(column) + "::text";
  }
  return "count(*), coalesce(sum(hashtextextended(row(" + row_text + ")::text, 0)::numeric), 0)::text";
}

// The day a row's cursor falls on, in `timezone`, as text; 'all' for an
// integer cursor.
std::string bucket_sql(const std::string& quoted_cursor, CursorType type, const std::string& timezone) {
  switch (type) {
    case CursorType::TimestampTz: return "(" + quoted_cursor + " at time zone " + quote_literal(timezone) + ")::date::text";
    case CursorType::Timestamp: return quoted_cursor + "::date::text";
    case CursorType::Date: return quoted_cursor + "::text";
    case CursorType::Integer: return "'all'";
  }
  std::abort();  // every cursor type is a case above
}

}  // namespace

std::string verify_query(const QualifiedName& table, const std::vector<std::string>& columns,
                         const std::string& cursor, const Window& window, const std::string& timezone) {
  const std::string c = quote_identifier(cursor);
  return "SELECT " + bucket_sql(c, window.lo.type, timezone) + " AS bucket, " + count_and_checksum(columns, "") +
         " FROM " + table.quoted() + " WHERE " + cursor_range_predicate(c, window.lo, window.hi) +
         " GROUP BY 1 ORDER BY 1";
}

std::string verify_bucket_predicate(const std::string& cursor, const Window& window, const std::string& timezone,
                                    const std::string& bucket) {
  const std::string c = quote_identifier(cursor);
  return "(" + cursor_range_predicate(c, window.lo, window.hi) + ") AND " + bucket_sql(c, window.lo.type, timezone) +
         " = " + quote_literal(bucket);
}

PartitionVerifyQueries partition_verify_queries(const TableConfig& table, const std::vector<PartitionColumn>& columns,
                                                const std::string& cast) {
  // count(*) and the sum of each row's hash, the row being the text of a
  // row of its columns' texts.
  const auto checksum = [&](bool source) {
    std::string row;
    for (const PartitionColumn& c : columns) {
      std::string value = (source ? "q." : "") + quote_identifier(c.name) + "::text";
      if (source && !c.stored_as.empty()) value = "((" + value + ")::" + c.stored_as + ")::text";
      row += (row.empty() ? "" : ", ") + value;
    }
    return "count(*), coalesce(sum(hashtextextended(row(" + row + ")::text, 0)::numeric), 0)::text";
  };
  const std::string column = quote_identifier(table.partition->column);
  PartitionVerifyQueries q;
  q.source = "SELECT " + checksum(true) + " FROM (\n" + without_trailing_semicolons(table.query) + "\n) q";
  q.target = "SELECT " + checksum(false) + " FROM " + table.target_table.quoted() + " WHERE " + column +
             " >= $1::" + cast + " AND " + column + " < $2::" + cast;
  return q;
}

}  // namespace tidemark
