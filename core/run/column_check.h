// The step before an incremental run or a cursor backfill writes anything:
// the source's columns against the table's loaded columns and the
// target's (core/run/schema_drift.h), read through the ports, with the
// outcome in the run's summary. Stateless; on the run's thread.
#pragma once

#include <optional>
#include <vector>

#include "core/run/run_context.h"
#include "core/run/run_step.h"

namespace tidemark {

// What the chunks of a run load once the columns are settled.
struct ColumnPlan {
  SourceTable source;                // its `columns` are the ones a chunk copies
  TargetChanges first_step;          // made to the target by the first step: created, columns added
  // The snapshot the first chunk stores; nothing when the stored one holds.
  std::optional<std::vector<ColumnShape>> snapshot;
};

// Checks the target (Target::check) and decides; records in `summary`
// whether the columns drifted. A target that does not exist yet (with
// create_target) is planned as the source's columns with a primary key on
// the key, created by the first step. Fails, permanently, on drift and on a
// column the source or the target lacks; with whatever error the ports
// give when they fail.
// Records in `summary` what a committed first step changed in the target.
void note_first_step(const TargetChanges& changes, RunSummary& summary);

Result<ColumnPlan> check_columns(const RunContext& run, const SourceTable& source,
                                 const std::optional<std::vector<ColumnShape>>& loaded, RunSummary& summary);

}  // namespace tidemark
