// A scheduled (or `tidemark run`) firing of a partition table: under the
// table's lock, writes every complete partition after the last one done,
// oldest first, each as its own run (PartitionWriter). Stops at the first
// failure or at a partition a backfill is writing, so partitions are done
// in order. One instance per firing, on one worker thread.
#pragma once

#include "core/run/partition_writer.h"
#include "core/run/run_context.h"

namespace tidemark {

// The instant before which partitions are complete: the source's safe
// horizon, so that a partition still receiving rows from a transaction in
// flight waits for a later firing. Nothing while a prepared transaction is
// open (its rows may be stamped anywhere before it). A horizon the source
// cannot fully see (no pg_monitor, a standby without primary:) is used as
// it is and noted in `report`. Fails when the source cannot be asked.
Result<std::optional<Instant>> partitions_complete_before(Source& source, const TableConfig& table,
                                                          HorizonReport& report);

class PartitionRun {
 public:
  explicit PartitionRun(const RunContext& context) : run_(context), writer_(context) {}

  // The summary spans every partition written: range from the first lo to
  // the last hi, rows summed, chunks = partitions written. Success with no
  // partitions when none is due. Each partition is reported to the
  // observer as it finishes; the firing itself only when it did not
  // succeed and no partition was reported (the table's lock held
  // elsewhere, the source not reached).
  RunSummary execute(RunTrigger trigger);

 private:
  Status write_due_partitions(RunTrigger trigger, RunSummary& summary);

  const RunContext run_;  // references only: the run owns none of it
  PartitionWriter writer_;
};

}  // namespace tidemark
