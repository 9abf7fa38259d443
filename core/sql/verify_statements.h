// The SQL that `tidemark verify` runs on both sides: per day of the cursor
// (in the pipeline's zone), the row count and an order-independent
// checksum of the copied columns, over a half-open window. Pure; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "core/watermark/cursor_value.h"
#include "core/text/sql_identifier.h"
#include "core/watermark/window_plan.h"
#include "core/config/config_model.h"

namespace tidemark {

// Columns: bucket (a date as text, or "all" for integer cursors), rows,
// checksum (the sum of a 64-bit hash of each row's text, as numeric text).
// Requires both sessions to use the same TimeZone and DateStyle, so that
// equal values print as equal text.
std::string verify_query(const QualifiedName& table, const std::vector<std::string>& columns,
                         const std::string& cursor, const Window& window, const std::string& timezone);

// The rows of one bucket that verify_query reported (a day as text, or
// 'all'), as a WHERE predicate over the table's columns: for listing the
// keys that differ in it (row_hash_statements).
std::string verify_bucket_predicate(const std::string& cursor, const Window& window, const std::string& timezone,
                                    const std::string& bucket);

// One column of a partition query's result, as a check compares it: by
// name, and on the source as the target would store it (`stored_as`, the
// target column's type: the text the source prints, read as that type,
// as a COPY of the rows reads it); empty `stored_as` compares the text
// the source prints (a type the source may not know, an enum of the
// target's, say).
struct PartitionColumn {
  std::string name;
  std::string stored_as;
};

// One partition, both sides: on the source, what the table's query returns
// now ($1 = lo, $2 = hi, bound by the caller); on the target, its rows
// with the partition column in [$1::cast, $2::cast). Each returns one row:
// the row count and an order-independent checksum of `columns` (the
// query's output columns), each row hashed as the text of a row of them,
// which tells NULL from '' and from '\N'. Same session requirements as
// verify_query.
struct PartitionVerifyQueries {
  std::string source;
  std::string target;
};
PartitionVerifyQueries partition_verify_queries(const TableConfig& table, const std::vector<PartitionColumn>& columns,
                                                const std::string& cast);

}  // namespace tidemark
