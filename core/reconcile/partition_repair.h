// Carries out one reconcile of a partition table (`tidemark reconcile`,
// and its deletes: schedule): under the table's lock, every done partition
// that is still complete (the source and the inputs have passed its end)
// is compared with what its query returns now (count and checksum), and
// each that differs is written again from its query under its partition's
// lock, as a backfill writes it, with a run row that says why. A dry run
// compares and writes nothing. One instance per reconcile, on the calling
// thread; expected failures end up in the report, never as exceptions.
#pragma once

#include "core/reconcile/reconcile_run.h"
#include "core/run/partition_writer.h"
#include "core/run/run_context.h"

namespace tidemark {

class PartitionRepair {
 public:
  // `context.observer` hears each partition written, as a firing's do.
  explicit PartitionRepair(const RunContext& context) : run_(context), writer_(context) {}

  // Requires table.mode == Partition. The report's run is the frame (its
  // status, error, the rows written again); its `partitions` each one
  // compared.
  ReconcileReport execute(const ReconcileRequest& request);

 private:
  Status repair_locked(const ReconcileRequest& request, RunSummary& summary, ReconcileReport& report);

  const RunContext run_;  // references only: the repair owns none of it
  PartitionWriter writer_;
};

}  // namespace tidemark
