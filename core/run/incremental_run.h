// Carries out one run of an incremental table (SPEC §3) through the ports:
// take the lock, read the watermark, plan the windows, load them chunk by
// chunk (each chunk commits and moves the watermark), record the run.
// One instance per run; it holds references to its collaborators and runs
// on the calling (worker) thread. It never throws for expected failures:
// they end up in the RunSummary and the run row.
#pragma once

#include "core/run/column_check.h"
#include "core/run/run_context.h"
#include "core/watermark/window_plan.h"

namespace tidemark {

// What a run decided under its lock before reading a row.
struct IncrementalPlan {
  ColumnPlan columns;
  WindowPlan windows;
  std::optional<CursorValue> initial;  // the table's initial:, read as its cursor's type
  // The first step has columns to settle (a target to create, columns to
  // append, loaded columns to store): it commits with rows or without.
  bool first_step = false;
};

class IncrementalRun {
 public:
  explicit IncrementalRun(const RunContext& context) : run_(context) {}

  // Requires a table whose mode runs as an IncrementalRun (incremental,
  // append). Reports the summary to the
  // observer before returning it.
  RunSummary execute(RunTrigger trigger);

  // Under the table's lock, with `summary.watermark_before` read: checks
  // the columns (`loaded`: the table's loaded columns), reads the safe
  // horizon and plans the windows, recording in `summary` what it found.
  // Reads no row. A batch of runs (core/run/load_batch.h) plans with it.
  Result<IncrementalPlan> plan(const std::optional<std::vector<ColumnShape>>& loaded, RunSummary& summary);
  // Where a run whose range held no row moves the watermark from
  // `watermark` (a window with nothing in it still teaches it a later hi);
  // nothing when it stays.
  static std::optional<WatermarkMove> move_without_rows(const WindowPlan& windows,
                                                        const std::optional<CursorValue>& watermark);

 private:
  // The part that runs under the lock, its run row open; fills `summary`.
  // `loaded`: the table's loaded columns.
  Status run_locked(const std::optional<std::vector<ColumnShape>>& loaded, RunSummary& summary);
  // hi from the source's safe horizon (core/watermark/safe_horizon.h),
  // its integer samples kept in the state; records the horizon in the
  // summary. Fails when the horizon is unknowable and the table has no
  // lookback, or `initial` is ahead of it.
  Result<std::optional<CursorValue>> safe_hi(const SourceTable& source_table, const std::optional<CursorValue>& initial,
                                             RunSummary& summary);
  // Reads the source's count of the table's updates and deletes, which its
  // cursor cannot see (core/run/change_watch.h), into the summary.
  Status watch_changes(RunSummary& summary);
  // Loads every planned chunk (none unless `read`: the range holds no row
  // and the first step has nothing to settle) and moves the watermark;
  // returns the error that stopped it, if any.
  // `refill_from`: the first chunk reads from there instead (rows loaded
  // before, read again for the columns appended to the target).
  Status load_chunks(const ColumnPlan& columns, const WindowPlan& plan, bool read,
                     const std::optional<CursorValue>& refill_from, RunSummary& summary);

  const RunContext run_;  // references only: the run owns none of it
};

}  // namespace tidemark
