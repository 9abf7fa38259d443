// Carries out one run of a snapshot table (SPEC §3, mode: snapshot)
// through the ports: take the table's lock, make the target equal to one
// snapshot of the source table in one unit of work, and move the watermark
// to the source's clock at that snapshot. One instance per run, on the
// calling (worker) thread; it holds references only. Expected failures end
// up in the RunSummary and the run row, never as exceptions.
#pragma once

#include "core/run/run_context.h"

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

  const RunContext run_;  // references only: the run owns none of it
};

}  // namespace tidemark
