#include "core/run/table_run.h"

#include <cstdlib>

#include "core/config/table_modes.h"
#include "core/run/incremental_run.h"
#include "core/run/input_horizon.h"
#include "core/run/partition_run.h"
#include "core/run/snapshot_run.h"

namespace tidemark {

namespace {

RunSummary run_by_class(const RunContext& context, RunTrigger trigger) {
  switch (table_mode(context.table.mode).run) {
    case RunClass::IncrementalRun: return IncrementalRun(context).execute(trigger);
    case RunClass::PartitionRun: return PartitionRun(context).execute(trigger);
    case RunClass::SnapshotRun: return SnapshotRun(context).execute(trigger);
  }
  std::abort();
}

}  // namespace

RunSummary run_table(const RunContext& context, RunTrigger trigger) {
  RunSummary summary = run_by_class(context, trigger);
  announce_to_dependents(context.table, summary, context.state);
  return summary;
}

}  // namespace tidemark
