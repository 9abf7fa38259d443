// Writes one partition of a partition table as one run: takes the
// partition's lock, records a run row, replaces the partition in the
// target (one unit of work, marking it done), records the outcome. Used
// by scheduled runs (PartitionRun) and by backfill workers alike, so both
// serialise on the same per-partition lock. Holds references; one
// partition at a time, on the calling thread.
#pragma once

#include "core/run/run_context.h"

namespace tidemark {

// The request for one partition of `table`: its window, and the window as
// local dates and wall-clock times in `zone` (for date and timestamp
// partition columns).
PartitionRequest partition_request(const TableKey& table, RunId run, const TimeWindow& partition,
                                   const TimeZone& zone, PartitionUnit unit);

class PartitionWriter {
 public:
  explicit PartitionWriter(const RunContext& context) : run_(context) {}

  // Why a partition is written, for its record: `rewrite_reason`, why a
  // partition done before is written again (its run row's; empty for a
  // first write); `input_changes_seen`, for a table with inputs, their
  // count of changes as read with the inputs the write relies on
  // (StepRecord::input_changes_seen).
  struct Why {
    std::string rewrite_reason;
    std::optional<std::int64_t> input_changes_seen;
  };

  // Requires table.mode == Partition. SkippedLocked when the partition's
  // lock is held elsewhere (and `wait` is false or timed out). Either way
  // the done partitions of the table's dependents that end after its
  // start are flagged to be checked again, with the write.
  RunSummary write(const TimeWindow& partition, RunTrigger trigger, bool wait, const Why& why = {});

 private:
  const RunContext run_;  // references only: the run owns none of it
};

}  // namespace tidemark
