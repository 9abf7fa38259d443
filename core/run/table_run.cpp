#include "core/run/table_run.h"

#include <cstdlib>

#include "core/config/table_modes.h"
#include "core/run/incremental_run.h"
#include "core/run/partition_run.h"
#include "core/run/snapshot_run.h"

namespace tidemark {

RunSummary run_table(const RunContext& context, RunTrigger trigger) {
  switch (table_mode(context.table.mode).run) {
    case RunClass::IncrementalRun: return IncrementalRun(context).execute(trigger);
    case RunClass::PartitionRun: return PartitionRun(context).execute(trigger);
    case RunClass::SnapshotRun: return SnapshotRun(context).execute(trigger);
  }
  std::abort();
}

}  // namespace tidemark
