#include "core/run/column_check.h"

#include "core/run/target_fit.h"

namespace tidemark {

Result<ColumnPlan> check_columns(const RunContext& run, const SourceTable& source,
                                 const std::optional<std::vector<ColumnShape>>& loaded, RunSummary& summary) {
  const auto target = run.target.check(run.table);
  if (!target) return target.failure();
  SchemaDriftInput input;
  input.source_name = run.table.source_table ? run.table.source_table->display() : std::string();
  input.target_name = run.table.target_table.display();
  input.source = source.catalog;
  input.loaded = loaded;
  input.target = target->columns;
  input.configured = run.table.columns;
  input.policy = run.table.on_schema_change;
  input.first_load = !summary.watermark_before;
  SchemaDecision decision = decide_schema(input);
  summary.schema_drift = !decision.drift.empty();
  summary.schema_changes = decision.drift.describe();
  if (decision.failure) return permanent_error(*decision.failure);
  // Whether every load, not only a first one, can write what it copies.
  const SourceKeys source_keys{source.catalog, source.unique_indexes, source.kind};
  if (const auto refusal = refuse_target(run.table, source_keys, *target, decision.load)) {
    return permanent_error(*refusal);
  }
  ColumnPlan plan;
  plan.source = source;
  plan.source.columns = std::move(decision.load);
  plan.append = std::move(decision.append);
  if (decision.snapshot_changed) plan.snapshot = std::move(decision.snapshot);
  return plan;
}

}  // namespace tidemark
