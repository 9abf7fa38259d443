// A scheduled (or `tidemark run`) firing of a partition table: under the
// table's lock, writes every complete partition after the last one done,
// oldest first, each as its own run (PartitionWriter). Stops at the first
// failure or at a partition a backfill is writing, so partitions are done
// in order. One instance per firing, on one worker thread.
#pragma once

#include "core/cancel_token.h"
#include "core/partition_writer.h"

namespace tidemark {

class PartitionRun {
 public:
  PartitionRun(const PipelineConfig& pipeline, const TableConfig& table, StateStore& state, Source& source,
               Target& target, RunObserver& observer, const CancelToken& cancel)
      : pipeline_(pipeline),
        table_(table),
        state_(state),
        source_(source),
        writer_(pipeline, table, state, target, observer),
        observer_(observer),
        cancel_(cancel) {}

  // The summary spans every partition written: range from the first lo to
  // the last hi, rows summed, chunks = partitions written. Success with no
  // partitions when none is due. Each partition is reported to the
  // observer as it finishes; the firing itself only when the table's lock
  // was held elsewhere.
  RunSummary execute(RunTrigger trigger);

 private:
  Status write_due_partitions(RunTrigger trigger, RunSummary& summary);

  const PipelineConfig& pipeline_;
  const TableConfig& table_;
  StateStore& state_;
  Source& source_;
  PartitionWriter writer_;
  RunObserver& observer_;
  const CancelToken& cancel_;
};

}  // namespace tidemark
