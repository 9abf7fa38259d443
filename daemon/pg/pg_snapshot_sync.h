// A snapshot run's write into a target that already holds rows: the
// target made equal to one source snapshot at the cost of what changed.
// Both sides' fingerprints first (equal: nothing to do); else the row
// diff (core/diff/row_diff.h) over both sides' (key, row hash) streams,
// and only the missing, changed and gone rows are copied or deleted; a
// diff that gives up crosses the whole table instead, in the same
// snapshot. Made by PgUnitOfWork for one call, on its thread, inside its
// open target transaction. Throws PgError.
#pragma once

#include <optional>

#include "core/run/cancel_token.h"
#include "core/run/run_ports.h"
#include "core/sql/copy_format.h"
#include "daemon/pg/pg_connection.h"

namespace tidemark {

class PgSnapshotSync {
 public:
  PgSnapshotSync(PgConnection& source, PgConnection& target, const TargetCopyTypes& copy_types,
                 const CancelToken& cancel)
      : source_(source), target_(target), copy_types_(copy_types), cancel_(cancel) {}

  // Requires the target's transaction open and its table not empty.
  // Nothing when the source table cannot be locked by this role (LOCK
  // TABLE wants a grant on the whole table, where a column grant serves a
  // SELECT): the caller then takes the path that needs no LOCK TABLE.
  std::optional<SnapshotWrite> run(const TableConfig& table, const SourceTable& source);

 private:
  PgConnection& source_;
  PgConnection& target_;
  const TargetCopyTypes& copy_types_;
  const CancelToken& cancel_;
};

}  // namespace tidemark
