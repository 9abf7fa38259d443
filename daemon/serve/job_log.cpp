#include "daemon/serve/job_log.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/text/plain_text.h"
#include "core/watermark/table_reason.h"

namespace tidemark {

void JobLog::job_ended(const JobEnded& ended) {
  const RunStatus status = ended.summary.status;
  const bool ok = status == RunStatus::Success || status == RunStatus::SkippedLocked;
  spdlog::log(ok ? spdlog::level::info : spdlog::level::err, "{}", describe_job(ended));
}

std::string describe_job(const JobEnded& ended) {
  if (ended.reconcile) {
    return describe_reconcile(*ended.reconcile, ended.dry_run) + ", " + std::to_string(ended.duration.count()) +
           " ms";
  }
  std::string line = describe_run(ended.summary, ended.duration);
  if (ended.batch_size > 1) line += " (in a batch of " + std::to_string(ended.batch_size) + ")";
  return line;
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
    line += "; not compared for changes (type differs between source and target): " + join(report.uncompared);
  }
  if (!s.error.empty()) line += ": " + s.error;
  return line;
}

std::string describe_run(const RunSummary& s, std::chrono::milliseconds duration) {
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
          std::to_string(duration.count()) + " ms";
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
  if (!s.appended_columns.empty()) line += "; new source columns added to the target: " + join(s.appended_columns);
  if (!s.error.empty()) line += ": " + s.error;
  return line;
}

}  // namespace tidemark
