// The frame of every run, whatever it writes: its lock, the clean-up of
// runs a crash left `running`, its run row, and its report to the
// observer. Incremental runs, partition writes, both kinds of backfill,
// reconcile (its dry run too) and a partition table's firing go through
// it, so each ends the same way on every path, the lock always released.
// One per run, owned by it, on the run's thread.
#pragma once

#include "core/run/run_observer.h"
#include "core/run/run_ports.h"
#include "core/run/scoped_run_lock.h"
#include "core/run/table_ownership.h"

namespace tidemark {

// Whether the frame keeps a run row: every run that writes does. A
// reconcile's dry run writes nothing, and a partition table's firing only
// orders its partitions, each a run with a row of its own.
enum class RunRow { Kept, None };

// The run row's closing record for a concluded summary.
RunEnd run_end(const RunSummary& summary);

class RunLifecycle {
 public:
  // `ownership` is asked once the table's lock is held (a partition's lock
  // is taken under its table's, asked already); it must outlive the run.
  RunLifecycle(StateStore& state, const TableOwnership& ownership, RunObserver& observer, RunLock lock,
               RunTrigger trigger, RunRow row = RunRow::Kept);
  // A run opened but never finished is finished here, as failed: its row
  // does not stay `running`, its lock is not kept.
  ~RunLifecycle();
  RunLifecycle(const RunLifecycle&) = delete;
  RunLifecycle& operator=(const RunLifecycle&) = delete;

  // Takes the lock (waiting only when `wait`) and opens the run row,
  // which marks the runs the lock proves dead and reads the watermark into
  // the summary (without a row: the lock only). False when the run must
  // not go on; the summary says why (skipped: the lock is held elsewhere,
  // or this process no longer owns the table and let it go; failed: the
  // state could not be reached, or its watermark not read).
  bool open(bool wait);

  // The run's figures so far; the run fills them in as it goes.
  RunSummary& summary() { return summary_; }
  // The table's loaded columns, as open() read it.
  const std::optional<std::vector<ColumnShape>>& loaded_columns() const { return loaded_columns_; }
  // Where the table's last snapshot left each side, as open() read it.
  const std::optional<SnapshotHorizon>& snapshot_horizon() const { return snapshot_horizon_; }
  // The stored watermark was written by a snapshot run (StoredWatermark::snapshot).
  bool watermark_is_snapshot() const { return watermark_is_snapshot_; }

  // Concludes the summary from `outcome` (cancelled rather than failed
  // when `cancelled`; ignored when open() returned false), writes the run
  // row's end, marks a failed partition, releases the lock and reports the
  // run to the observer. Call once, whether open() succeeded or not.
  const RunSummary& finish(const Status& outcome, bool cancelled);

 private:
  StateStore& state_;
  const TableOwnership& ownership_;
  RunObserver& observer_;
  ScopedRunLock lock_;
  RunTrigger trigger_;
  RunRow row_;
  RunSummary summary_;
  // A failure found once the row was open: finish() records it.
  std::optional<Error> failed_open_;
  std::optional<std::vector<ColumnShape>> loaded_columns_;
  std::optional<SnapshotHorizon> snapshot_horizon_;
  bool watermark_is_snapshot_ = false;
  bool opened_ = false;
  bool finished_ = false;
};

}  // namespace tidemark
