#include "core/run/column_check.h"

#include "core/run/target_fit.h"

#include <algorithm>

namespace tidemark {
namespace {

// The table create_target makes: the columns the table loads (every source
// column, or those configured), as the source has them, with a primary
// key on the key, if it has one (so its columns are NOT NULL, wherever
// the source's are not: a view's). Drift is then decided against it like any target.
TargetTable planned_target(const TableConfig& table, const SourceTable& source) {
  TargetTable out;
  for (const ColumnShape& c : source.catalog) {
    const bool loaded = table.columns.empty() ||
                        std::find(table.columns.begin(), table.columns.end(), c.name) != table.columns.end();
    if (!loaded) continue;
    ColumnShape column = c;
    column.fill = ColumnFill::None;  // the source's values are copied, generated ones too
    // A primary key's columns are NOT NULL: a NULL key fails the load.
    if (std::find(table.key.begin(), table.key.end(), c.name) != table.key.end()) column.not_null = true;
    out.columns.push_back(column);
  }
  if (table.key.empty()) return out;  // rows without a key: no primary key either
  UniqueIndex key;
  key.name = "primary key";
  key.primary = true;
  key.columns = table.key;
  out.unique_indexes.push_back(key);
  return out;
}

}  // namespace

Result<ColumnPlan> check_columns(const RunContext& run, const SourceTable& source,
                                 const std::optional<std::vector<ColumnShape>>& loaded, RunSummary& summary) {
  const auto checked = run.target.check(run.table);
  if (!checked) return checked.failure();
  const bool create = !checked->exists;
  const TargetTable target = create ? planned_target(run.table, source) : *checked;
  SchemaDriftInput input;
  input.source_name = run.table.source_table ? run.table.source_table->display() : std::string();
  input.target_name = run.table.target_table.display();
  input.source = source.catalog;
  input.loaded = loaded;
  input.target = target.columns;
  input.configured = run.table.columns;
  input.policy = run.table.on_schema_change;
  input.first_load = !summary.watermark_before;
  SchemaDecision decision = decide_schema(input);
  summary.schema_drift = !decision.drift.empty();
  summary.schema_changes = decision.drift.describe();
  if (decision.failure) return permanent_error(*decision.failure);
  // Whether every load, not only a first one, can write what it copies.
  const SourceKeys source_keys{source.catalog, source.unique_indexes, source.kind};
  if (const auto refusal = refuse_target(run.table, source_keys, target, decision.load)) {
    return permanent_error(*refusal);
  }
  ColumnPlan plan;
  plan.source = source;
  plan.source.columns = std::move(decision.load);
  plan.first_step.create = create;
  plan.first_step.append = std::move(decision.append);
  if (decision.snapshot_changed) plan.snapshot = std::move(decision.snapshot);
  return plan;
}

void note_first_step(const TargetChanges& changes, RunSummary& summary) {
  summary.target_created = summary.target_created || changes.create;
  for (const ColumnShape& c : changes.append) summary.appended_columns.push_back(c.name);
}

}  // namespace tidemark
