// Carries out one run of a snapshot table (SPEC §3, mode: snapshot)
// through the ports: take the table's lock, make the target equal to one
// snapshot of the source table in one unit of work, and move the watermark
// to the source's clock at that snapshot. One instance per run, on the
// calling (worker) thread; it holds references only. Expected failures end
// up in the RunSummary and the run row, never as exceptions.
#pragma once

#include "core/run/column_check.h"
#include "core/run/run_context.h"
#include "core/run/run_step.h"

namespace tidemark {

// How a snapshot's write found what changed, in a few words for the log.
std::string snapshot_path_text(const SnapshotWrite& write);

class SnapshotRun {
 public:
  explicit SnapshotRun(const RunContext& context) : run_(context) {}

  // Requires table.mode == Snapshot. Reports the summary to the observer
  // before returning it.
  RunSummary execute(RunTrigger trigger);

 private:
  // The part under the lock, its run row open; fills `summary`. `loaded`
  // is the table's loaded columns; `since`, where its last snapshot left
  // each side; `snapshot_watermark`, whether the stored watermark is a
  // snapshot's time.
  Status run_locked(const std::optional<std::vector<ColumnShape>>& loaded, const std::optional<SnapshotHorizon>& since,
                    bool snapshot_watermark, RunSummary& summary);
  // A first load into an empty target, read as page ranges under one held
  // snapshot when the table is big enough (core/run/load_range_plan.h):
  // each range commits by itself, the last one moving the watermark.
  // False when the table is not loaded by ranges, having written nothing.
  Result<bool> load_in_ranges(const SourceTable& source, const ColumnPlan& columns, RunSummary& summary);
  // A ranged first load that stopped part way: its ranges left, read in a
  // snapshot of their own and upserted. True when they were (the first
  // of them made the first step's changes); false when the table can no
  // longer be read by ranges, having written nothing: the diff that
  // follows either way makes the target exact.
  Result<bool> resume_ranges(const std::vector<LoadRange>& plan, const ColumnPlan& columns, RunSummary& summary);
  // Commits `ranges` one by one, read in the source's held snapshot
  // (straight, or upserted), the first with `changes` and the loaded
  // columns; with `finishing`, the last one completes the load.
  // `planned`: the load's ranges in all, of which `ranges` are the ones left.
  Status commit_ranges(const SourceTable& source, const std::vector<LoadRange>& ranges, int planned, bool straight,
                       const ColumnPlan& columns, const HeldSnapshot* finishing, RunSummary& summary);

  const RunContext run_;  // references only: the run owns none of it
};

}  // namespace tidemark
