// The UnitOfWork over PostgreSQL: one transaction on the target
// connection for the rows a step writes (COPY from the source, upsert on
// the key, or a partition's delete and insert) and the step's record
// through the state store, in that same transaction when the state lives
// in the target database, else in the state database's own transaction,
// committed right after the target's. It decides nothing: core/run_step
// says when to commit. Made by PgTarget::begin for one step of one run,
// on that run's thread; rolls back whatever it did not commit.
#pragma once

#include <functional>
#include <optional>

#include "core/run/cancel_token.h"
#include "core/run/run_ports.h"
#include "core/sql/copy_format.h"
#include "core/sql/load_statements.h"
#include "daemon/pg/data/pg_source.h"
#include "daemon/pg/libpq/pg_connection.h"
#include "daemon/pg/state/step_recorder.h"

namespace tidemark {

// Points in a step where tests inject failures.
enum class ChunkStep { BeforeTargetWrite, AfterTargetWrite, AfterCommit };

class PgUnitOfWork final : public UnitOfWork {
 public:
  // `copy_types` are the target's, as its check found them: a chunk's
  // COPY from source to target is binary when they allow it. The types of
  // a table this unit makes (create_table) go to `made_types` once it
  // commits, for the run's later units. A `helper`'s unit writes a range
  // for a run whose lock another session holds (PgRangeCrew).
  PgUnitOfWork(PgConnection& target, PgSource& source, StepRecorder& state, RunLock lock, const CancelToken& cancel,
               std::function<void(ChunkStep)> fault_hook, TargetCopyTypes copy_types = {},
               TargetCopyTypes* made_types = nullptr, bool helper = false)
      : helper_(helper),
        target_(target),
        source_(source),
        state_(state),
        lock_(std::move(lock)),
        cancel_(cancel),
        fault_hook_(std::move(fault_hook)),
        copy_types_(std::move(copy_types)),
        made_types_(made_types) {}
  ~PgUnitOfWork() override;
  PgUnitOfWork(const PgUnitOfWork&) = delete;
  PgUnitOfWork& operator=(const PgUnitOfWork&) = delete;

  Status create_table(const TableConfig& table, const SourceTable& source) override;
  Status add_columns(const TableConfig& table, const std::vector<ColumnShape>& columns) override;
  Result<ChunkCounts> write_chunk(const TableConfig& table, const SourceTable& source, const Window& window) override;
  Result<SnapshotWrite> replace_table(const TableConfig& table, const SourceTable& source,
                                      const std::optional<SnapshotHorizon>& since) override;
  Result<RangeWrite> write_range(const TableConfig& table, const SourceTable& source, const PageRange& pages,
                                 bool straight) override;
  Result<ChunkCounts> replace_partition(const TableConfig& table, const PartitionRequest& request) override;
  Result<ReconcileWrite> reconcile(const TableConfig& table, const SourceTable& source,
                                 const ReconcileFix& fix) override;
  Result<StepRecorded> record(const StepRecord& record) override;
  Status commit() override;

 private:
  // Opens the target transaction and runs `write` in it, the fault hook
  // around it. Requires that nothing was written or recorded yet (one
  // write per unit; columns may have been added before it). Every
  // failure comes back as an Error; the destructor rolls back.
  Result<ChunkCounts> in_target_transaction(const std::function<ChunkCounts()>& write);
  // A chunk's rows (`window`), or the whole table's (`snapshot`, which
  // gets what a snapshot adds: the source's clock, the rows deleted), from
  // the source into the target: straight in when the target is empty,
  // else staged and upserted. Throws PgError.
  ChunkCounts load_rows(const TableConfig& table, const SourceTable& source, const std::optional<Window>& window,
                        SnapshotWrite* snapshot);
  // A snapshot's first look: true when the target's rows have the
  // source's fingerprint (core/sql/load_statements.h), read at once on
  // both sides after the source table's lock and clock; then `counts` and
  // `snapshot` say so (read, nothing written, the clock). Throws PgError.
  bool target_is_source(const TableConfig& table, const SourceTable& source, const LoadStatements& sql,
                        ChunkCounts& counts, SnapshotWrite& snapshot);
  // Begins the target transaction, under the run's lock on the target
  // when the state lives elsewhere. Throws PgError.
  void open_target();
  void step(ChunkStep s) const {
    if (fault_hook_) fault_hook_(s);
  }

  const bool helper_;
  PgConnection& target_;
  PgSource& source_;
  StepRecorder& state_;
  RunLock lock_;
  const CancelToken& cancel_;
  std::function<void(ChunkStep)> fault_hook_;
  TargetCopyTypes copy_types_;
  TargetCopyTypes* made_types_;
  bool made_table_ = false;   // create_table made or found the table: copy_types_ are its
  bool target_open_ = false;  // a target transaction is open
  bool state_open_ = false;   // a transaction of a separate state database is open
  bool written_ = false;      // the unit's write ran
  // With a separate state database: the dependents' partitions to flag
  // again once the rows committed (record()).
  std::optional<DownstreamRecheck> flag_after_commit_;
};

}  // namespace tidemark
