// How a partition's [lo, hi) is bound for its query and compared with the
// target: in the partition column's own type (a local date, a local
// wall-clock time, or an instant), read from the target table. Used by the
// unit of work that replaces a partition and by the check of a partition
// against its query. Stateless functions; the connection is the caller's.
#pragma once

#include <string>
#include <vector>

#include "core/config/config_model.h"
#include "core/run/run_ports.h"
#include "daemon/pg/libpq/pg_connection.h"

namespace tidemark {

struct PartitionBounds {
  PgParams params;          // $1 = lo, $2 = hi
  std::vector<PgOid> types;   // their OIDs, for a query that leaves them untyped
  std::string cast;         // the SQL type name: date, timestamp or timestamptz
};

// The bounds of `request` for a partition column of `column_type` (its
// format_type()). Fails (permanent) when the type is not a date or
// timestamp, or an hour partition meets a date column.
Result<PartitionBounds> partition_bounds_for(const std::string& column_type, const TableConfig& table,
                                             const PartitionRequest& request);

// Reads the type of table.partition->column in the target table, then as
// partition_bounds_for. Fails (permanent) when the table or column is
// missing; a failing connection is a transient error.
Result<PartitionBounds> partition_bounds(PgConnection& target, const TableConfig& table,
                                         const PartitionRequest& request);

}  // namespace tidemark
