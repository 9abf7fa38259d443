// Writes one partition of a partition table as one run: takes the
// partition's lock, records a run row, replaces the partition in the
// target (one transaction), records the outcome. Used by scheduled runs
// (PartitionRun) and by backfill workers alike, so both serialise on the
// same per-partition lock. Holds references; one partition at a time, on
// the calling thread.
#pragma once

#include "core/config_model.h"
#include "core/run_observer.h"
#include "core/run_ports.h"

namespace tidemark {

class PartitionWriter {
 public:
  PartitionWriter(const PipelineConfig& pipeline, const TableConfig& table, StateStore& state, Target& target,
                  RunObserver& observer)
      : pipeline_(pipeline), table_(table), state_(state), target_(target), observer_(observer) {}

  // Requires table.mode == Partition. SkippedLocked when the partition's
  // lock is held elsewhere (and `wait` is false or timed out).
  RunSummary write(const TimeWindow& partition, RunTrigger trigger, bool wait);

  // The partition's window as timestamptz cursor values, for run rows.
  static Window as_window(const TimeWindow& partition);

 private:
  const PipelineConfig& pipeline_;
  const TableConfig& table_;
  StateStore& state_;
  Target& target_;
  RunObserver& observer_;
};

}  // namespace tidemark
