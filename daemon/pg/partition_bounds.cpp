#include "daemon/pg/partition_bounds.h"

#include "core/time/instant_text.h"

namespace tidemark {

Result<PartitionBounds> partition_bounds(PgConnection& target, const TableConfig& table,
                                         const PartitionRequest& request) {
  constexpr PgOid kDateOid = 1082;
  constexpr PgOid kTimestampOid = 1114;
  constexpr PgOid kTimestampTzOid = 1184;
  return as_result([&]() -> Result<PartitionBounds> {
    const std::string name = table.target_table.display();
    const std::string& column = table.partition->column;
    const PgResult type = target.exec(
        "select format_type(a.atttypid, a.atttypmod) from pg_attribute a"
        " where a.attrelid = to_regclass($1) and a.attname = $2 and a.attnum > 0 and not a.attisdropped",
        {table.target_table.quoted(), column});
    if (type.rows() == 0) return permanent_error("target table " + name + " does not exist or has no column " + column);
    const auto column_type = cursor_type_from_postgres(type.text(0, 0));
    if (!column_type || *column_type == CursorType::Integer) {
      return permanent_error("partition column " + column + " of " + name + " has type " + type.text(0, 0) +
                             "; it must be timestamptz, timestamp or date");
    }
    switch (*column_type) {
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
  });
}

}  // namespace tidemark
