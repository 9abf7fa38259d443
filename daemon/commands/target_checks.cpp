#include "daemon/commands/target_checks.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <ostream>

#include "core/run/cancel_token.h"
#include "core/run/schema_drift.h"
#include "core/run/target_fit.h"
#include "core/text/plain_text.h"
#include "daemon/commands/command_support.h"
#include "daemon/pg/data/pg_source.h"
#include "daemon/pg/data/pg_target.h"
#include "daemon/pg/data/target_definition.h"

namespace tidemark {
namespace {

// The privileges a run of `t` needs that the sessions' roles lack, each
// with what it is for; empty when none is missing. A first run that would
// fail on one is refused here instead.
std::vector<std::string> missing_grants(PgConnection& source, PgConnection& target, const TableConfig& t,
                                        bool target_exists) {
  std::vector<std::string> out;
  // SELECT on the table, or on its columns (a column grant serves a load
  // that copies those).
  if (!source.exec("select has_table_privilege($1, 'SELECT') or has_any_column_privilege($1, 'SELECT')",
                   {t.source_table->quoted()})
           .boolean(0, 0)) {
    out.push_back("SELECT on source table " + t.source_table->display() + " (GRANT SELECT ON " +
                  t.source_table->quoted() + " TO <the source's role>)");
  }
  // The upsert needs SELECT, INSERT and UPDATE; DELETE only a table that
  // deletes (a snapshot's gone rows, a reconcile's). A missing schema is
  // made by create_target, which then needs CREATE on the database.
  const bool deletes = t.mode == TableMode::Snapshot || (t.deletes && t.deletes->action == DeleteAction::Delete);
  const PgResult r = target.exec(
      "select has_database_privilege(current_database(), 'TEMP'),"
      " case when $2 then array_to_string(array(select p from unnest($4::text[]) p"
      "   where not has_table_privilege($1, p)), ', ') else '' end,"
      " case when $2 then true"
      "   when to_regnamespace(quote_ident(coalesce($3, current_schema()))) is null"
      "     then has_database_privilege(current_database(), 'CREATE')"
      "   else has_schema_privilege(coalesce($3, current_schema()), 'CREATE') end,"
      " coalesce($3, current_schema())",
      {t.target_table.quoted(), target_exists ? "true" : "false", t.target_table.schema(),
       deletes ? "{SELECT,INSERT,UPDATE,DELETE}" : "{SELECT,INSERT,UPDATE}"});
  if (!r.boolean(0, 0)) {
    out.push_back("TEMP on the target database (a load stages its rows in a temporary table: GRANT TEMP ON DATABASE "
                  "... TO <the target's role>)");
  }
  if (!r.text(0, 1).empty()) {
    out.push_back(r.text(0, 1) + " on target table " + t.target_table.display());
  }
  if (!r.boolean(0, 2)) {
    out.push_back("CREATE on schema " + r.text(0, 3) + ", or on the database when the schema is not there yet " +
                  "(create_target makes the table there: GRANT CREATE ON SCHEMA " + quote_identifier(r.text(0, 3)) +
                  " TO <the target's role>, or create the schema and the table beforehand)");
  }
  return out;
}

// One pipeline's incremental tables, over one source and one target session.
int check_pipeline(const Config& config, const PipelineConfig& pipeline, std::ostream& out, std::ostream& err) {
  std::unique_ptr<PgConnection> source_session;
  std::unique_ptr<PgConnection> target_session;
  try {
    source_session = connect_to_source(config, pipeline.source);
    target_session = connect_to(config, pipeline.target);
  } catch (const std::exception& e) {
    fmt::print(out, "pipeline {}: targets not checked ({})\n", pipeline.name, e.what());
    return 0;
  }
  const CancelToken never;
  PgSource source(*source_session);
  PgTarget target(*target_session, source, /*steps=*/nullptr, never);
  int refusals = 0;
  for (const TableConfig& t : pipeline.tables) {
    if (!reads_source_table(t.mode)) continue;
    const auto inspected = source.inspect(t);
    const auto checked = inspected ? target.check(t) : Result<TargetTable>(inspected.failure());
    if (!checked && checked.failure().kind == ErrorKind::Permanent) {
      // A missing table or column: every run refuses it too.
      fmt::print(err, "{}: pipeline {}, table {}: {}\n", pipeline.location.file, pipeline.name, t.name,
                 checked.error());
      ++refusals;
      continue;
    }
    if (!checked) {
      fmt::print(out, "  table {}: target not checked ({})\n", t.name, checked.error());
      continue;
    }
    try {
      const std::vector<std::string> grants = missing_grants(*source_session, *target_session, t, checked->exists);
      if (!grants.empty()) {
        fmt::print(err, "{}: pipeline {}, table {}: this role lacks {}\n", pipeline.location.file, pipeline.name,
                   t.name, join(grants));
        ++refusals;
        continue;
      }
    } catch (const PgError& e) {
      fmt::print(out, "  table {}: grants not checked ({})\n", t.name, e.what());
    }
    if (!checked->exists) {
      // create_target: what its first run would create, or why it cannot.
      try {
        const TableDefinition definition =
            read_table_definition(*source_session, *t.source_table, inspected->columns, t.target_table);
        const std::vector<DefinedType> missing = missing_types(*target_session, definition);
        if (const auto refusal = creation_refusal(definition, missing, t.target_table)) {
          fmt::print(err, "{}: pipeline {}, table {}: {}\n", pipeline.location.file, pipeline.name, t.name, *refusal);
          ++refusals;
          continue;
        }
        std::vector<std::string> types;
        for (const DefinedType& type : missing) types.push_back(type.name);
        fmt::print(out, "  table {}: target {} does not exist: the first run creates it (create_target), {} columns "
                        "and {}{}\n",
                   t.name, t.target_table.display(), definition.columns.size(),
                   t.key.empty() ? "no primary key (the table has no key)" : "a primary key on [" + join(t.key) + "]",
                   types.empty() ? "" : ", with type " + join(types));
      } catch (const PgError& e) {
        fmt::print(out, "  table {}: target not checked ({})\n", t.name, e.what());
      }
      continue;
    }
    // As a first load sees it: no snapshot of loaded columns to drift from.
    SchemaDriftInput input;
    input.source_name = t.source_table->display();
    input.target_name = t.target_table.display();
    input.source = inspected->catalog;
    input.target = checked->columns;
    input.configured = t.columns;
    input.policy = t.on_schema_change;
    input.first_load = true;
    const SchemaDecision decision = decide_schema(input);
    std::optional<std::string> refusal = decision.failure;
    if (!refusal) {
      const SourceKeys source_keys{inspected->catalog, inspected->unique_indexes, inspected->kind};
      refusal = refuse_target(t, source_keys, *checked, decision.load);
    }
    if (refusal) {
      fmt::print(err, "{}: pipeline {}, table {}: {}\n", pipeline.location.file, pipeline.name, t.name, *refusal);
      ++refusals;
      continue;
    }
    fmt::print(out, "  table {}: target {} takes every load", t.name, input.target_name);
    if (!decision.generated_by_target.empty()) {
      fmt::print(out, "; it generates {} itself: not copied", join(decision.generated_by_target));
    }
    fmt::print(out, "\n");
    for (const std::string& note : load_warnings(t, inspected->cursor_type, inspected->cursor_stamped_by_database,
                                                 *checked, decision.load)) {
      fmt::print(out, "    note: {}\n", note);
    }
  }
  return refusals;
}

}  // namespace

int check_targets(const Config& config, std::ostream& out, std::ostream& err) {
  int refusals = 0;
  for (const PipelineConfig& p : config.pipelines) {
    const bool any = std::any_of(p.tables.begin(), p.tables.end(),
                                 [](const TableConfig& t) { return reads_source_table(t.mode); });
    if (!any) continue;
    fmt::print(out, "pipeline {}: targets on {}\n", p.name, p.target);
    refusals += check_pipeline(config, p, out, err);
  }
  return refusals;
}

}  // namespace tidemark
