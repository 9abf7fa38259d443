#include "daemon/serve/table_runner.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/config/table_modes.h"
#include "core/reconcile/partition_repair.h"
#include "core/run/input_horizon.h"
#include "core/run/table_run.h"
#include "core/watermark/table_reason.h"

namespace tidemark {

void TableRunner::prepare(JobPorts& ports) const {
  if (firing_) ports.state().set_firing(*firing_);
  if (fault_hook_ && ports.pg_target() != nullptr) ports.pg_target()->set_fault_hook(fault_hook_);
}

TimedSummary TableRunner::run(const PipelineConfig& pipeline, const TableConfig& table, RunTrigger trigger,
                              const CancelToken& cancel) {
  const auto started = std::chrono::steady_clock::now();
  TimedSummary out;
  JobPorts ports(*config_, pipeline, sessions_, cancel, table_mode(table.mode).in_pipeline_time_zone);
  if (ports.state_unreachable()) {
    out.summary = ports.unrecorded_failure(TableKey{pipeline.name, table.name});
    observer_.on_run_finished(out.summary);
  } else {
    prepare(ports);
    out.summary = run_table(
        RunContext{pipeline, table, ports.state(), ports.source(), ports.target(), observer_, cancel, ownership_},
        trigger);
  }
  out.duration = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  if (log_runs_) {
    const bool ok = out.summary.status == RunStatus::Success || out.summary.status == RunStatus::SkippedLocked;
    spdlog::log(ok ? spdlog::level::info : spdlog::level::err, "{}", describe_run(out));
  }
  return out;
}

std::vector<std::optional<TimedSummary>> TableRunner::run_batch(const PipelineConfig& pipeline,
                                                                const std::vector<BatchMember>& members,
                                                                const CancelToken& cancel) {
  const auto started = std::chrono::steady_clock::now();
  std::vector<std::optional<TimedSummary>> out(members.size());
  JobPorts ports(*config_, pipeline, sessions_, cancel, /*pipeline_time_zone=*/false);
  // Each run of its own records why.
  if (ports.state_unreachable() || ports.data_unreachable()) return out;
  const auto summaries =
      LoadBatch(pipeline, ports.state(), ports.source(), ports.target(), observer_, cancel, ownership_)
          .execute(members);
  const auto elapsed =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (!summaries[i]) continue;
    out[i] = TimedSummary{*summaries[i], elapsed};
    if (log_runs_) spdlog::info("{} (in a batch of {})", describe_run(*out[i]), members.size());
  }
  return out;
}

ReconcileReport TableRunner::reconcile(const PipelineConfig& pipeline, const TableConfig& table,
                                       const ReconcileRequest& request, const CancelToken& cancel) {
  const auto started = std::chrono::steady_clock::now();
  ReconcileReport out;
  const TableModeSpec& mode = table_mode(table.mode);
  JobPorts ports(*config_, pipeline, sessions_, cancel, mode.in_pipeline_time_zone);
  if (ports.state_unreachable()) {
    // A reconcile is not a load: no observer counts it (the run row feeds
    // its gauges), so the report and the log line carry the error.
    out.run = ports.unrecorded_failure(TableKey{pipeline.name, table.name});
  } else {
    prepare(ports);
    const RunContext context{pipeline, table, ports.state(), ports.source(), ports.target(), observer_, cancel,
                             ownership_};
    if (mode.reconcile == ReconcileBy::Partitions) {
      out = PartitionRepair(context).execute(request);
    } else {
      const auto [source_keys, target_keys] = ports.key_sides(table);
      out = ReconcileRun(context, source_keys, target_keys).execute(request);
    }
    announce_to_dependents(table, out.run, ports.state());
  }
  const auto elapsed =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  if (log_runs_) {
    const bool ok = out.run.status == RunStatus::Success || out.run.status == RunStatus::SkippedLocked;
    spdlog::log(ok ? spdlog::level::info : spdlog::level::err, "{}, {} ms", describe_reconcile(out, request.dry_run),
                elapsed.count());
  }
  return out;
}

namespace {

// A partition table's reconcile: what it compared and wrote again.
std::string describe_partitions(const ReconcileReport& report, bool dry_run, std::string line) {
  std::size_t differing = 0;
  std::size_t rewritten = 0;
  for (const PartitionChecked& p : report.partitions) {
    differing += p.found.equal() ? 0 : 1;
    rewritten += p.rewritten ? 1 : 0;
  }
  line += ", " + std::to_string(report.partitions.size()) + " partitions compared, " + std::to_string(differing) +
          " differed" + (dry_run ? "" : ", " + std::to_string(rewritten) + " written again") + ", rows written " +
          std::to_string(report.run.rows_written);
  if (report.partitions_not_complete > 0) {
    line += "; " + std::to_string(report.partitions_not_complete) + " done partitions not compared, not complete " +
            "again yet (" + report.held_by + ")";
  }
  if (!report.run.error.empty()) line += ": " + report.run.error;
  return line;
}

}  // namespace

std::string describe_reconcile(const ReconcileReport& report, bool dry_run) {
  const RunSummary& s = report.run;
  std::string line = s.table.display() + ": reconcile" + (dry_run ? " (dry run)" : "") + " " +
                     std::string(run_status_name(s.status));
  if (s.status == RunStatus::Failed) line += " (" + std::string(error_kind_name(s.error_kind)) + ")";
  if (s.status == RunStatus::SkippedLocked) return line + " (another run holds the table's lock)";
  if (s.partitions) return describe_partitions(report, dry_run, std::move(line));
  if (s.run != 0) line += " run " + std::to_string(s.run);
  if (report.no_watermark) return line + ", no watermark yet: nothing is claimed, nothing compared";
  line += ", watermark " + cursor_text_or_none(s.watermark_before);
  const char* verb = dry_run ? " to delete" : " deleted";
  line += ", " + std::to_string(report.counts.deleted) + " rows" + verb + ", " +
          std::to_string(report.counts.missing) + " missing, " + std::to_string(report.counts.changed) + " changed" +
          (dry_run ? "" : " (copied again)");
  if (report.restored > 0) line += ", " + std::to_string(report.restored) + " marked rows back in the source";
  line += ", " + std::to_string(report.differing_buckets) + " of " + std::to_string(report.buckets) +
          " buckets differed, " + std::to_string(report.keys_fetched) + " keys read";
  if (!report.uncompared.empty()) {
    std::string names;
    for (const std::string& c : report.uncompared) names += (names.empty() ? "" : ", ") + c;
    line += "; not compared for changes (type differs between source and target): " + names;
  }
  if (!s.error.empty()) line += ": " + s.error;
  return line;
}

std::string describe_run(const TimedSummary& run) {
  const RunSummary& s = run.summary;
  std::string line = s.table.display() + ": " + std::string(run_status_name(s.status));
  // The kind decides whether the daemon retries, so the operator sees it too.
  if (s.status == RunStatus::Failed) line += " (" + std::string(error_kind_name(s.error_kind)) + ")";
  if (s.status == RunStatus::SkippedLocked) return line + " (another run holds the table's lock)";
  if (s.run != 0) line += " run " + std::to_string(s.run);
  if (!s.partitions) {
    line += ", watermark " + cursor_text_or_none(s.watermark_before) + " -> " + cursor_text_or_none(s.watermark_after);
  }
  if (s.range) line += ", window [" + cursor_to_text(s.range->lo) + ", " + cursor_to_text(s.range->hi) + ")";
  const char* unit = s.partitions ? " partition" : " chunk";
  line += ", " + std::to_string(s.chunks) + unit + (s.chunks == 1 ? "" : "s") + ", rows read " +
          std::to_string(s.rows_read) + ", written " + std::to_string(s.rows_written) +
          (s.rows_deleted > 0 ? " (" + std::to_string(s.rows_deleted) + " deleted)" : "") + ", " +
          std::to_string(run.duration.count()) + " ms";
  const HorizonReport& h = s.horizon;
  if (h.lag_seconds) line += fmt::format(", horizon lag {:.3f}s", *h.lag_seconds);
  if (h.null_cursor_rows && *h.null_cursor_rows > 0) {
    line += ", " + std::to_string(*h.null_cursor_rows) + " rows with a NULL cursor (never loaded)";
  }
  if (h.infinite_cursor_rows && *h.infinite_cursor_rows > 0) {
    line += ", " + std::to_string(*h.infinite_cursor_rows) + " rows with an infinite cursor (never loaded)";
  }
  if (!h.held_by.empty()) line += "; " + (h.watermark_ahead ? h.held_by : held_back_text(h.held_by));
  if (!s.snapshot_path.empty()) line += "; " + s.snapshot_path;
  if (s.changes && s.changes->unseen > 0) {
    line += "; " + std::to_string(s.changes->unseen) +
            " updates and deletes the cursor cannot see (new rows only) since the table last ran clean";
  }
  if (!s.rewrite_reason.empty()) line += "; written again: " + s.rewrite_reason;
  if (s.target_created) line += "; target table created";
  if (!s.appended_columns.empty()) {
    std::string names;
    for (const std::string& c : s.appended_columns) names += (names.empty() ? "" : ", ") + c;
    line += "; new source columns added to the target: " + names;
  }
  if (!s.error.empty()) line += ": " + s.error;
  return line;
}

}  // namespace tidemark
