#include "daemon/serve/table_runner.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/config/table_modes.h"
#include "core/run/table_run.h"
#include "core/sql/row_fingerprint.h"
#include "daemon/pg/pg_run_ports.h"
#include "daemon/pg/pipeline_connections.h"
#include "daemon/pg/pg_key_side.h"
#include "daemon/pg/pg_source.h"
#include "daemon/pg/pg_state_store.h"

namespace tidemark {
namespace {

// A unit of work on a database that could not be reached: every step fails.
class UnreachableWork final : public UnitOfWork {
 public:
  explicit UnreachableWork(std::string error) : error_(std::move(error)) {}
  Status create_table(const TableConfig&, const SourceTable&) override { return Error{error_}; }
  Status add_columns(const TableConfig&, const std::vector<ColumnShape>&) override { return Error{error_}; }
  Result<ChunkCounts> write_chunk(const TableConfig&, const SourceTable&, const Window&) override {
    return Error{error_};
  }
  Result<SnapshotWrite> replace_table(const TableConfig&, const SourceTable&,
                                      const std::optional<SnapshotHorizon>&) override {
    return Error{error_};
  }
  Result<ChunkCounts> replace_partition(const TableConfig&, const PartitionRequest&) override { return Error{error_}; }
  Result<ReconcileWrite> reconcile(const TableConfig&, const SourceTable&, const ReconcileFix&) override {
    return Error{error_};
  }
  Result<StepRecorded> record(const StepRecord&) override { return Error{error_}; }
  Status commit() override { return Error{error_}; }

 private:
  std::string error_;
};

// Stands in for a source or target that could not be reached, so that the
// run still takes its lock and records the failure in its run row.
class UnreachableDatabase final : public Source, public Target {
 public:
  explicit UnreachableDatabase(std::string error) : error_(std::move(error)) {}
  Result<SourceTable> inspect(const TableConfig&) override { return Error{error_}; }
  Result<HorizonReading> read_horizon(const TableConfig&, CursorType, std::optional<SourceMicros>) override {
    return Error{error_};
  }
  Result<CursorValue> cursor_at(SourceMicros, CursorType) override { return Error{error_}; }
  Result<std::optional<CursorValue>> lower_bound(const TableConfig&, CursorType) override { return Error{error_}; }
  Result<WindowProbe> probe(const TableConfig&, const SourceTable&, const std::optional<Window>&) override {
    return Error{error_};
  }
  Result<std::optional<std::int64_t>> count_changes(const TableConfig&) override { return Error{error_}; }
  Result<TargetTable> check(const TableConfig&) override { return Error{error_}; }
  std::unique_ptr<UnitOfWork> begin(const RunLock&) override { return std::make_unique<UnreachableWork>(error_); }

 private:
  std::string error_;
};


}  // namespace

TimedSummary TableRunner::run(const PipelineConfig& pipeline, const TableConfig& table, RunTrigger trigger,
                              const CancelToken& cancel) {
  const auto started = std::chrono::steady_clock::now();
  TimedSummary out;
  PipelineConnections connections(pool_, shared_);
  try {
    connections.open_state(*config_);
  } catch (const std::exception& e) {
    out.summary.table = TableKey{pipeline.name, table.name};
    out.summary.status = RunStatus::Failed;
    out.summary.error = e.what();
    observer_.on_run_finished(out.summary);
  }
  if (connections.state) {
    PgStateStore state(*connections.state);
    state.set_ownership_check(still_owner_);
    if (firing_) state.set_firing(*firing_);
    std::string unreachable;
    try {
      connections.open_data(*config_, pipeline);
      if (table_mode(table.mode).in_pipeline_time_zone) connections.use_pipeline_time_zone(pipeline);
    } catch (const std::exception& e) {
      unreachable = e.what();
    }
    const auto execute = [&](Source& source, Target& target) {
      return run_table(RunContext{pipeline, table, state, source, target, observer_, cancel}, trigger);
    };
    if (!unreachable.empty()) {
      UnreachableDatabase missing(unreachable);
      out.summary = execute(missing, missing);
    } else {
      PgSource source =
          connections.make_source([](const std::string& warning) { spdlog::warn("{}", warning); }, &cancel);
      PgTarget target(connections.target(), source, state, cancel,
                      shared_ != nullptr ? &shared_->catalogs : nullptr);
      if (fault_hook_) target.set_fault_hook(fault_hook_);
      out.summary = execute(source, target);
    }
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
  PipelineConnections connections(pool_, shared_);
  try {
    connections.open_state(*config_);
    connections.open_data(*config_, pipeline);
  } catch (const std::exception&) {
    return out;
  }
  PgRunPorts ports(connections, cancel, [](const std::string& warning) { spdlog::warn("{}", warning); });
  ports.state.set_ownership_check(still_owner_);
  const auto summaries = LoadBatch(pipeline, ports.state, ports.source, ports.target, observer_, cancel).execute(members);
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
  out.run.table = TableKey{pipeline.name, table.name};
  PipelineConnections connections(pool_, shared_);
  try {
    connections.open_state(*config_);
    connections.open_data(*config_, pipeline);
  } catch (const std::exception& e) {
    // Without the state nothing can be recorded; without a side nothing
    // compared. Either way no run row: the error is the report's.
    out.run.status = RunStatus::Failed;
    out.run.error = e.what();
    return out;
  }
  PgRunPorts ports(connections, cancel, [](const std::string& warning) { spdlog::warn("{}", warning); });
  if (fault_hook_) ports.target.set_fault_hook(fault_hook_);
  ports.state.set_ownership_check(still_owner_);
  if (firing_) ports.state.set_firing(*firing_);
  const bool hash_record =
      hash_record_between(connections.source->server_major_version(), connections.target().server_major_version());
  PgKeySide source_keys(*connections.source, table, PgKeySide::Role::Source, hash_record);
  PgKeySide target_keys(connections.target(), table, PgKeySide::Role::Target, hash_record,
                        reconcile_mark_column(table));
  const RunContext context{pipeline, table, ports.state, ports.source, ports.target, observer_, cancel};
  out = ReconcileRun(context, source_keys, target_keys).execute(request);
  const auto elapsed =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  if (log_runs_) {
    const bool ok = out.run.status == RunStatus::Success || out.run.status == RunStatus::SkippedLocked;
    spdlog::log(ok ? spdlog::level::info : spdlog::level::err, "{}, {} ms", describe_reconcile(out, request.dry_run),
                elapsed.count());
  }
  return out;
}

std::string describe_reconcile(const ReconcileReport& report, bool dry_run) {
  const RunSummary& s = report.run;
  std::string line = s.table.display() + ": reconcile" + (dry_run ? " (dry run)" : "") + " " +
                     std::string(run_status_name(s.status));
  if (s.status == RunStatus::Failed) line += " (" + std::string(error_kind_name(s.error_kind)) + ")";
  if (s.status == RunStatus::SkippedLocked) return line + " (another run holds the table's lock)";
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
  if (!h.held_by.empty()) line += std::string(h.watermark_ahead ? "; " : "; held back by ") + h.held_by;
  if (!s.snapshot_path.empty()) line += "; " + s.snapshot_path;
  if (s.changes && s.changes->unseen > 0) {
    line += "; " + std::to_string(s.changes->unseen) +
            " updates and deletes the cursor cannot see (new rows only) since the table last ran clean";
  }
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
