// The step before an incremental run or a cursor backfill writes anything:
// the source's columns against the table's schema snapshot and the
// target's (core/run/schema_drift.h), read through the ports, with the
// outcome in the run's summary. Stateless; on the run's thread.
#pragma once

#include <optional>
#include <vector>

#include "core/run/run_context.h"

namespace tidemark {

// What the chunks of a run load once the columns are settled.
struct ColumnPlan {
  SourceTable source;                // its `columns` are the ones a chunk copies
  std::vector<ColumnShape> append;   // added to the target by the first chunk
  // The snapshot the first chunk stores; nothing when the stored one holds.
  std::optional<std::vector<ColumnShape>> snapshot;
};

// Checks the target (Target::check) and decides; records in `summary`
// whether the columns drifted. Fails, permanently, on drift and on a
// column the source or the target lacks; with whatever error the ports
// give when they fail.
Result<ColumnPlan> check_columns(const RunContext& run, const SourceTable& source,
                                 const std::optional<std::vector<ColumnShape>>& loaded, RunSummary& summary);

}  // namespace tidemark
