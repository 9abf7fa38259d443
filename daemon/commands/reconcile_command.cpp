#include <algorithm>
#include <optional>
#include <ostream>

#include "core/config/table_modes.h"
#include "core/run/cancel_token.h"
#include "daemon/commands/chunk_logger.h"
#include "daemon/commands/command_support.h"
#include "daemon/commands/commands.h"
#include "daemon/commands/exit_code.h"
#include "daemon/commands/interrupt_scope.h"
#include "core/schedule/job_end_chain.h"
#include "daemon/serve/job_log.h"
#include "daemon/serve/job_runner.h"

namespace tidemark {
namespace {

// Keys of each kind a dry run lists: enough to look into, few enough to read.
constexpr std::size_t kDryRunExamples = 50;

// A partition table's reconcile, a line per partition that differed (each
// one compared when there are few).
void print_partitions(const ReconcileReport& report, const PipelineConfig& pipeline, const TableConfig& table,
                      bool dry_run, std::ostream& out) {
  const bool all = report.partitions.size() <= kDryRunExamples;
  for (const PartitionChecked& p : report.partitions) {
    if (p.found.equal() && !all) continue;
    out << "  " << partition_label(p.window, table.partition->unit, *pipeline.zone) << ": ";
    if (p.found.equal()) {
      out << "ok (" << p.found.source_rows << " rows)\n";
    } else if (p.rewritten) {
      out << "written again: " << p.found.difference() << '\n';
    } else if (dry_run) {
      out << "would be written again: " << p.found.difference() << '\n';
    } else {
      out << "differs (" << p.found.difference() << "), not written again: " << p.error << '\n';
    }
  }
}

}  // namespace

int run_reconcile(const ConfigPtr& config, const ReconcileOptions& command_line, std::ostream& out,
                  std::ostream& err) {
  const PipelineConfig* pipeline = config->find_pipeline(command_line.pipeline);
  if (pipeline == nullptr) {
    err << "tidemark reconcile: no pipeline named \"" << command_line.pipeline << "\"\n";
    return kExitUsage;
  }
  std::vector<const TableConfig*> tables;
  if (!command_line.table.empty()) {
    const TableConfig* table = pipeline->find_table(command_line.table);
    if (table == nullptr) {
      err << "tidemark reconcile: pipeline " << pipeline->name << " has no table \"" << command_line.table << "\"\n";
      return kExitUsage;
    }
    const TableModeSpec& mode = table_mode(table->mode);
    if (mode.reconcile == ReconcileBy::Refused) {
      err << mode_refusal("tidemark reconcile", mode.mode, mode.reconcile_refused, pipeline->name, table->name)
          << '\n';
      return kExitUsage;
    }
    // A table without deletes: may share its target table with other
    // tables (the configuration refuses that only beside deletes:); its
    // reconcile would delete their rows as gone from its own source.
    if (const auto conflict = config->whole_target_conflict(*pipeline, *table, "a reconcile")) {
      err << "tidemark reconcile: " << pipeline->name << "." << table->name << ": " << *conflict << "\n";
      return kExitUsage;
    }
    tables.push_back(table);
  } else {
    for (const TableConfig& table : pipeline->tables) {
      if (table.deletes && table_mode(table.mode).reconcile != ReconcileBy::Refused) tables.push_back(&table);
    }
    if (tables.empty()) {
      err << "tidemark reconcile: no table of pipeline " << pipeline->name
          << " has deletes: configured; name one with --table\n";
      return kExitUsage;
    }
  }
  // A dry run writes nothing, not even the schema.
  if (const auto exit_code = prepare_state(*config, "reconcile", err, !command_line.dry_run)) return *exit_code;
  CancelToken interrupt;
  const InterruptScope interrupt_scope(interrupt);

  ChunkLogger chunk_logger;
  ConnectionPool sessions(1, std::chrono::seconds(60));
  // The command's output is each job's end: nothing else reports it.
  JobEndChain ends;
  JobRunner runner(config, chunk_logger, sole_owner(), ends, JobSessions{&sessions});
  bool all_ok = true;
  for (const TableConfig* table : tables) {
    if (interrupt.cancelled()) {
      err << "tidemark reconcile: " << interrupt.reason() << "; " << pipeline->name << "." << table->name
          << " was not started\n";
      all_ok = false;
      continue;
    }
    ReconcileRequest request;
    request.trigger = RunTrigger::Reconcile;
    request.wait_for_lock = true;  // beside a load: wait for it to end
    request.dry_run = command_line.dry_run;
    if (request.dry_run) request.examples = kDryRunExamples;
    const JobEnded ended = runner.run_one(reconcile_job(*pipeline, *table, request), interrupt);
    const ReconcileReport& report = *ended.reconcile;
    out << describe_reconcile(report, command_line.dry_run) << '\n';
    if (report.run.partitions) {
      print_partitions(report, *pipeline, *table, command_line.dry_run, out);
      // A dry run that finds partitions to write says so by its exit code.
      const bool differ = std::any_of(report.partitions.begin(), report.partitions.end(),
                                      [](const PartitionChecked& p) { return !p.found.equal(); });
      all_ok = all_ok && report.run.status == RunStatus::Success && !(command_line.dry_run && differ);
      continue;
    }
    const auto examples = [&](const char* what, const std::vector<std::string>& keys) {
      if (keys.empty()) return;
      out << "  " << what << ":";
      for (const std::string& k : keys) out << ' ' << k;
      out << '\n';
    };
    // A failed reconcile rolled back the batch it failed in: its examples
    // were found gone, not necessarily deleted.
    const bool done = report.run.status == RunStatus::Success;
    examples(command_line.dry_run ? "would delete, e.g."
             : done               ? "deleted, e.g."
                                  : "gone from the source (the reconcile failed: not all deleted), e.g.",
             report.deleted_examples);
    examples("missing, e.g.", report.missing_examples);
    examples("changed, e.g.", report.changed_examples);
    all_ok = all_ok && report.run.status == RunStatus::Success;
  }
  return all_ok ? kExitOk : kExitFailure;
}

}  // namespace tidemark
