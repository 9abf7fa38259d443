// The frame of every run, whatever it writes: its lock, the clean-up of
// runs a crash left `running`, its run row, and its report to the
// observer. Incremental runs, partition writes and both kinds of backfill
// go through it, so each ends the same way on every path, the lock always
// released. One per run, owned by it, on the run's thread.
#pragma once

#include "core/run/run_observer.h"
#include "core/run/run_ports.h"
#include "core/run/scoped_run_lock.h"

namespace tidemark {

class RunLifecycle {
 public:
  RunLifecycle(StateStore& state, RunObserver& observer, RunLock lock, RunTrigger trigger);
  // A run opened but never finished is finished here, as failed: its row
  // does not stay `running`, its lock is not kept.
  ~RunLifecycle();
  RunLifecycle(const RunLifecycle&) = delete;
  RunLifecycle& operator=(const RunLifecycle&) = delete;

  // Takes the lock (waiting only when `wait`) and opens the run row,
  // which marks the runs the lock proves dead and reads the watermark into
  // the summary. False when the run must not go on; the summary says why
  // (skipped: the lock is held elsewhere; failed: the state could not be
  // reached).
  bool open(bool wait);

  // The run's figures so far; the run fills them in as it goes.
  RunSummary& summary() { return summary_; }
  // The table's schema snapshot, as open() read it.
  const std::optional<std::vector<ColumnShape>>& loaded_columns() const { return loaded_columns_; }

  // Concludes the summary from `outcome` (cancelled rather than failed
  // when `cancelled`; ignored when open() returned false), writes the run
  // row's end, marks a failed partition, releases the lock and reports the
  // run to the observer. Call once, whether open() succeeded or not.
  const RunSummary& finish(const Status& outcome, bool cancelled);

 private:
  StateStore& state_;
  RunObserver& observer_;
  ScopedRunLock lock_;
  RunTrigger trigger_;
  RunSummary summary_;
  std::optional<std::vector<ColumnShape>> loaded_columns_;
  bool opened_ = false;
  bool finished_ = false;
};

}  // namespace tidemark
