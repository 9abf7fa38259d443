#include <unistd.h>

#include <iostream>
#include <ostream>
#include <set>

#include "core/config/table_modes.h"
#include "core/run/cursor_backfill.h"
#include "core/run/input_horizon.h"
#include "core/time/instant_text.h"
#include "core/watermark/partition_plan.h"
#include "daemon/commands/backfill_progress.h"
#include "daemon/commands/progress_line.h"
#include "daemon/commands/chunk_logger.h"
#include "core/run/partition_run.h"
#include "daemon/commands/command_support.h"
#include "daemon/commands/commands.h"
#include "daemon/commands/exit_code.h"
#include "daemon/commands/interrupt_scope.h"
#include "daemon/commands/partition_backfill.h"
#include "daemon/serve/job_ports.h"
#include "daemon/serve/job_log.h"

namespace tidemark {
namespace {

// What a backfill that wrote rows again asks of the tables built from them.
void name_flagged_dependents(const TableConfig& table, std::ostream& out) {
  for (const TableRef& dependent : table.dependents) {
    if (dependent.mode == TableMode::Partition) {
      out << "dependent " << dependent.display() << ": its done partitions are checked again at its next firing\n";
    }
  }
}

int backfill_cursor_range(const std::shared_ptr<const Config>& config, const PipelineConfig& pipeline,
                          const TableConfig& table, const BackfillOptions& cl, const CancelToken& cancel,
                          std::ostream& out) {
  RunMeter meter;
  JobPorts ports(*config, pipeline, JobSessions{}, cancel, /*pipeline_time_zone=*/false, &meter);
  if (const auto& unreachable = ports.state_unreachable()) throw std::runtime_error(unreachable->message);
  ChunkLogger observer;
  ProgressLine progress(std::cerr, ::isatty(STDERR_FILENO) == 1);
  progress.follow(TableKey{pipeline.name, table.name}, meter);
  const auto started = std::chrono::steady_clock::now();
  const RunSummary summary =
      CursorBackfill(RunContext{pipeline, table, ports.state(), ports.source(), ports.target(), observer, cancel,
                                sole_owner()})
          .execute(cl.from, cl.to);
  progress.stop();
  out << describe_run(summary, std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::steady_clock::now() - started))
      << '\n';
  if (summary.rows_written > 0) name_flagged_dependents(table, out);
  if (summary.status == RunStatus::SkippedLocked) {
    out << "a run of " << pipeline.name << "." << table.name << " is active; try again when it has finished\n";
  }
  return summary.status == RunStatus::Success ? kExitOk : kExitFailure;
}

int backfill_partitions(const std::shared_ptr<const Config>& config, const PipelineConfig& pipeline,
                        const TableConfig& table, const BackfillOptions& cl, const CancelToken& cancel,
                        std::ostream& out, std::ostream& err) {
  const TimeZone& zone = *pipeline.zone;
  const auto from = parse_time_in_zone(cl.from, zone);
  const auto to = parse_time_in_zone(cl.to, zone);
  if (!from || !to) {
    err << "tidemark backfill: " << (from ? to.error() : from.error()) << '\n';
    return kExitUsage;
  }
  if (!(*from < *to)) {
    err << "tidemark backfill: --from must be before --to\n";
    return kExitUsage;
  }
  const TableKey key{pipeline.name, table.name};
  const PartitionUnit unit = table.partition->unit;
  const auto limit = static_cast<std::size_t>(cl.max_partitions);
  if (count_backfill_partitions(*from, *to, unit, zone, limit) > limit) {
    err << "tidemark backfill: --from " << cl.from << " --to " << cl.to << " spans more than " << limit
        << " partitions of table " << key.display() << ": check the dates, split the range, or pass --max-partitions "
        << "with a higher limit\n";
    return kExitUsage;
  }

  // Which partitions are complete is the source's word, its safe horizon,
  // and the inputs': a partition past an input's watermark would be
  // written short.
  JobPorts ports(*config, pipeline, JobSessions{}, cancel, table_mode(table.mode).in_pipeline_time_zone);
  for (const auto& unreachable : {ports.state_unreachable(), ports.data_unreachable()}) {
    if (unreachable) throw std::runtime_error(unreachable->message);
  }
  StateStore& state = ports.state();
  HorizonReport horizon;
  const auto complete = partition_horizon(ports.source(), state, key, table, horizon);
  if (!complete) throw std::runtime_error(complete.error());
  if (!complete->complete_before) {
    err << "tidemark backfill: " << horizon.held_by << "; try again once it has ended\n";
    return kExitFailure;
  }
  const BackfillPartitions plan = plan_backfill_partitions(*from, *to, *complete->complete_before, unit, zone);
  if (plan.incomplete.size() == 1) {
    out << "skipping " << partition_label(plan.incomplete.front(), unit, zone)
        << ": the partition is not complete yet\n";
  } else if (!plan.incomplete.empty()) {
    out << "skipping " << partition_label(plan.incomplete.front(), unit, zone) << " through "
        << partition_label(plan.incomplete.back(), unit, zone) << " (" << plan.incomplete.size()
        << " partitions): they are not complete yet\n";
  }
  if (!plan.incomplete.empty() && horizon.input_wait_seconds) out << "  (" << horizon.held_by << ")\n";

  std::vector<TimeWindow> todo;
  std::size_t already_done = 0;
  if (cl.rerun) {
    todo = plan.complete;
  } else {
    const auto done = state.done_partitions(key, *from, *to);
    if (!done) throw std::runtime_error(done.error());
    const std::set<Instant> done_set(done->begin(), done->end());
    for (const TimeWindow& w : plan.complete) {
      if (done_set.count(w.lo)) {
        ++already_done;
      } else {
        todo.push_back(w);
      }
    }
  }
  out << "backfill " << key.display() << ": " << todo.size() << " partition" << (todo.size() == 1 ? "" : "s")
      << " to write";
  if (already_done) out << " (" << already_done << " already done; --rerun redoes them)";
  out << ", " << cl.parallel << " at a time\n";
  out.flush();

  BackfillProgress progress(out, ::isatty(STDOUT_FILENO) == 1 && &out == &std::cout, static_cast<int>(todo.size()));
  PartitionBackfill(config, pipeline, table, complete->input_changes).run(todo, cl.parallel, progress, cancel);
  out << progress.summary_line("backfill " + key.display()) << '\n';
  if (cl.rerun && progress.done() > 0) name_flagged_dependents(table, out);
  announce_if_written(table, key, progress.done() > 0, state);
  if (cancel.cancelled()) out << "interrupted: run the same command again to finish what is missing\n";
  return progress.failed() == 0 && !cancel.cancelled() ? kExitOk : kExitFailure;
}

}  // namespace

int run_backfill(const ConfigPtr& config, const BackfillOptions& command_line, std::ostream& out, std::ostream& err) {
  const PipelineConfig* pipeline = config->find_pipeline(command_line.pipeline);
  const TableConfig* table = pipeline ? pipeline->find_table(command_line.table) : nullptr;
  if (table == nullptr) {
    err << "tidemark backfill: no table " << command_line.pipeline << "." << command_line.table << '\n';
    return kExitUsage;
  }
  const TableModeSpec& mode = table_mode(table->mode);
  if (mode.backfill == BackfillBy::Refused) {
    err << mode_refusal("tidemark backfill", mode.mode, mode.backfill_refused, pipeline->name, table->name) << '\n';
    return kExitUsage;
  }
  if (const auto exit_code = prepare_state(*config, "backfill", err)) return *exit_code;
  CancelToken cancel;
  const InterruptScope interrupt(cancel);
  try {
    if (mode.backfill == BackfillBy::Cursor) {
      return backfill_cursor_range(config, *pipeline, *table, command_line, cancel, out);
    }
    return backfill_partitions(config, *pipeline, *table, command_line, cancel, out, err);
  } catch (const std::exception& e) {
    err << "tidemark backfill: " << e.what() << '\n';
    return kExitFailure;
  }
}

}  // namespace tidemark
