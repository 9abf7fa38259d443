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

  // Requires table.mode == Partition. SkippedLocked when the partition's
  // lock is held elsewhere (and `wait` is false or timed out).
  // `rewrite_reason`: why a partition done before is written again, for
  // its run row; empty for a first write. Either way the done partitions
  // of the table's dependents that end after it are flagged to be checked
  // again, with the write.
  RunSummary write(const TimeWindow& partition, RunTrigger trigger, bool wait, const std::string& rewrite_reason = {});

 private:
  const RunContext run_;  // references only: the run owns none of it
};

}  // namespace tidemark
