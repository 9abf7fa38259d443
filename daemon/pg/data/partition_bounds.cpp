#include "daemon/pg/data/partition_bounds.h"

#include "core/time/instant_text.h"

namespace tidemark {

Result<PartitionBounds> partition_bounds_for(const std::string& column_type, const TableConfig& table,
                                             const PartitionRequest& request) {
  constexpr PgOid kDateOid = 1082;
  constexpr PgOid kTimestampOid = 1114;
  constexpr PgOid kTimestampTzOid = 1184;
  const std::string& column = table.partition->column;
  const auto type = cursor_type_from_postgres(column_type);
  if (!type || *type == CursorType::Integer) {
    return permanent_error("partition column " + column + " of " + table.target_table.display() + " has type " +
                           column_type + "; it must be timestamptz, timestamp or date");
  }
  switch (*type) {
    case CursorType::Date:
      if (request.hourly) {
        return permanent_error("partition column " + column + " is a date; hour partitions need a timestamp");
      }
      return PartitionBounds{{request.lo_date, request.hi_date}, {kDateOid, kDateOid}, "date"};
    case CursorType::Timestamp:
      return PartitionBounds{{request.lo_local, request.hi_local}, {kTimestampOid, kTimestampOid}, "timestamp"};
    default:
      return PartitionBounds{{format_instant(request.window.lo), format_instant(request.window.hi)},
                             {kTimestampTzOid, kTimestampTzOid},
                             "timestamptz"};
  }
}

Result<PartitionBounds> partition_bounds(PgConnection& target, const TableConfig& table,
                                         const PartitionRequest& request) {
  return as_result([&]() -> Result<PartitionBounds> {
    const PgResult type = target.exec(
        "select format_type(a.atttypid, a.atttypmod) from pg_attribute a"
        " where a.attrelid = to_regclass($1) and a.attname = $2 and a.attnum > 0 and not a.attisdropped",
        {table.target_table.quoted(), table.partition->column});
    if (type.rows() == 0) {
      return permanent_error("target table " + table.target_table.display() + " does not exist or has no column " +
                             table.partition->column);
    }
    return partition_bounds_for(type.text(0, 0), table, request);
  });
}

}  // namespace tidemark
