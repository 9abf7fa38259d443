// A snapshot run's write into a target that already holds rows: the
// target made equal to one source snapshot at the cost of what changed.
// Both sides' fingerprints first (equal: nothing to do); then the rows
// written since the previous snapshot, which explain the difference when
// nothing else changed; else the row diff (core/diff/row_diff.h) over
// both sides' (key, row hash) streams,
// and only the missing, changed and gone rows are copied or deleted (a
// table without a key: its multisets of row hashes, by the same merge); a
// diff that gives up crosses the whole table instead, in the same
// snapshot. Made by PgUnitOfWork for one call, on its thread, inside its
// open target transaction. Throws PgError.
#pragma once

#include <optional>

#include "core/diff/recent_rows.h"
#include "core/diff/row_diff.h"
#include "core/run/cancel_token.h"
#include "core/run/run_ports.h"
#include "core/sql/copy_format.h"
#include "core/sql/load_statements.h"
#include "core/sql/row_fingerprint.h"
#include "daemon/pg/libpq/pg_connection.h"
#include "daemon/pg/libpq/read_together.h"

namespace tidemark {

class PgSnapshotSync {
 public:
  PgSnapshotSync(PgConnection& source, PgConnection& target, const TargetCopyTypes& copy_types,
                 const CancelToken& cancel)
      : source_(source), target_(target), together_{&source_, &target_}, copy_types_(copy_types), cancel_(cancel) {}

  // Requires the target's transaction open and its table not empty.
  // Nothing when the source table cannot be locked by this role (LOCK
  // TABLE wants a grant on the whole table, where a column grant serves a
  // SELECT): the caller then takes the path that needs no LOCK TABLE.
  // `since`: where the previous snapshot left each side, whose rows
  // written since are looked at first (core/diff/recent_rows.h).
  std::optional<SnapshotWrite> run(const TableConfig& table, const SourceTable& source,
                                   const std::optional<SnapshotHorizon>& since);

 private:
  // The diff of the keys of the rows written on either side since
  // `since`; nothing when they are too many or do not explain the
  // difference between the fingerprints.
  std::optional<RowDiff> diff_recent(const TableConfig& table, const SourceTable& source,
                                     const std::vector<FingerprintColumn>& columns, const SnapshotHorizon& since,
                                     const TableFingerprint& theirs, const TableFingerprint& ours);
  // The diff of every row (the key's blocks first, where one integer
  // column is the key); `rows`, the larger side's count.
  RowDiff diff_all(const TableConfig& table, const std::vector<FingerprintColumn>& columns, bool hash_record,
                   std::int64_t rows);

  // A table without a key: both sides as multisets of row hashes
  // (core/sql/row_hash_statements.h, multiset_statements), then the row
  // values that differ deleted and copied again; past the diff's limits,
  // the target cleared and the whole table copied. Fills `out` but for
  // its rows read. `rows`, the larger side's count.
  void write_multiset(const TableConfig& table, const std::vector<FingerprintColumn>& columns, bool hash_record,
                      const LoadStatements& sql, CopyFormat format, std::int64_t rows, SnapshotWrite& out);

  PgConnection& source_;
  PgConnection& target_;
  // The diffs' two streams, read as they come (read_together.h).
  ReadTogether together_;
  const TargetCopyTypes& copy_types_;
  const CancelToken& cancel_;
};

}  // namespace tidemark
