#include "daemon/serve/metrics_registry.h"

#include <prometheus/text_serializer.h>

#include <cmath>
#include <memory>
#include <sstream>

#include "core/watermark/watermark_health.h"
#include "daemon/version.h"

namespace tidemark {

struct MetricsRegistry::TableSeries {
  double stale_after_seconds = 0;
  prometheus::Gauge* watermark_timestamp = nullptr;  // only once a time watermark is known
  prometheus::Gauge* age = nullptr;
  prometheus::Gauge* moved = nullptr;
  prometheus::Gauge* stale = nullptr;
  prometheus::Gauge* stale_after = nullptr;
  prometheus::Gauge* last_rows = nullptr;
  prometheus::Counter* rows_written = nullptr;
  prometheus::Counter* runs_success = nullptr;
  prometheus::Counter* runs_failed_transient = nullptr;  // label error: whether a retry can help
  prometheus::Counter* runs_failed_permanent = nullptr;
  prometheus::Counter* skipped_locked = nullptr;
  prometheus::Counter* skipped_overrun = nullptr;
  prometheus::Gauge* last_duration = nullptr;
  prometheus::Gauge* last_success = nullptr;
  prometheus::Gauge* in_progress = nullptr;
  prometheus::Gauge* horizon_lag = nullptr;
  prometheus::Gauge* failed_permanently = nullptr;
  prometheus::Gauge* schema_drift = nullptr;
  prometheus::Gauge* reconcile_deleted = nullptr;
  prometheus::Gauge* reconcile_missing = nullptr;
};

struct MetricsRegistry::PipelineSeries {
  int tables = 0;
  prometheus::Histogram* duration = nullptr;
  prometheus::Histogram* start_delay = nullptr;
};

namespace {

prometheus::Labels table_labels(const std::string& pipeline, const std::string& table) {
  return {{"pipeline", pipeline}, {"table", table}};
}

prometheus::Labels with(prometheus::Labels labels, const std::string& name, const std::string& value) {
  labels.emplace(name, value);
  return labels;
}

const prometheus::Histogram::BucketBoundaries kDurationBuckets{0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600};
const prometheus::Histogram::BucketBoundaries kDelayBuckets{0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300};

}  // namespace

MetricsRegistry::MetricsRegistry()
    : registry_(std::make_shared<prometheus::Registry>()),
      watermark_timestamp_(prometheus::BuildGauge()
                               .Name("tidemark_watermark_timestamp_seconds")
                               .Help("The stored watermark as Unix time (time cursors and partitions)")
                               .Register(*registry_)),
      watermark_age_(prometheus::BuildGauge()
                         .Name("tidemark_watermark_age_seconds")
                         .Help("Now minus the watermark (integer cursors: now minus when it last moved)")
                         .Register(*registry_)),
      watermark_moved_(prometheus::BuildGauge()
                           .Name("tidemark_watermark_last_moved_timestamp_seconds")
                           .Help("When the watermark last moved, as Unix time")
                           .Register(*registry_)),
      watermark_stale_(prometheus::BuildGauge()
                           .Name("tidemark_watermark_stale")
                           .Help("1 when the watermark is older than stale_after, or ahead of the source")
                           .Register(*registry_)),
      stale_after_(prometheus::BuildGauge()
                       .Name("tidemark_watermark_stale_after_seconds")
                       .Help("The configured stale_after threshold")
                       .Register(*registry_)),
      last_run_rows_(prometheus::BuildGauge()
                         .Name("tidemark_last_run_rows")
                         .Help("Rows written by the last successful run")
                         .Register(*registry_)),
      rows_written_(prometheus::BuildCounter()
                        .Name("tidemark_rows_written_total")
                        .Help("Rows written to the target")
                        .Register(*registry_)),
      runs_(prometheus::BuildCounter().Name("tidemark_runs_total").Help("Finished runs by status; failed ones by error kind (transient: retried; permanent: not)").Register(*registry_)),
      runs_skipped_(prometheus::BuildCounter()
                        .Name("tidemark_runs_skipped_total")
                        .Help("Firings that did not start a run, by reason")
                        .Register(*registry_)),
      run_duration_(prometheus::BuildHistogram()
                        .Name("tidemark_run_duration_seconds")
                        .Help("Run durations, per pipeline")
                        .Register(*registry_)),
      last_run_duration_(prometheus::BuildGauge()
                             .Name("tidemark_last_run_duration_seconds")
                             .Help("Duration of the table's last run")
                             .Register(*registry_)),
      last_success_(prometheus::BuildGauge()
                        .Name("tidemark_last_success_timestamp_seconds")
                        .Help("When the table's last successful run finished, as Unix time")
                        .Register(*registry_)),
      run_in_progress_(prometheus::BuildGauge()
                           .Name("tidemark_run_in_progress")
                           .Help("1 while a run of the table is in flight")
                           .Register(*registry_)),
      horizon_lag_(prometheus::BuildGauge()
                       .Name("tidemark_horizon_lag_seconds")
                       .Help("Source clock minus the last run's hi: what transactions in flight held back")
                       .Register(*registry_)),
      failed_permanently_(prometheus::BuildGauge()
                              .Name("tidemark_run_failed_permanently")
                              .Help("1 from a run that failed permanently (not retried) until a run succeeds")
                              .Register(*registry_)),
      schema_drift_(prometheus::BuildGauge()
                        .Name("tidemark_schema_drift")
                        .Help("1 while the source's columns no longer match what the table loads")
                        .Register(*registry_)),
      reconcile_deleted_(prometheus::BuildGauge()
                             .Name("tidemark_reconcile_deleted_rows")
                             .Help("Target rows whose key left the source, found by the last reconcile")
                             .Register(*registry_)),
      reconcile_missing_(prometheus::BuildGauge()
                             .Name("tidemark_reconcile_missing_rows")
                             .Help("Source rows below the watermark the target lacked at the last reconcile")
                             .Register(*registry_)),
      start_delay_(prometheus::BuildHistogram()
                       .Name("tidemark_run_start_delay_seconds")
                       .Help("Actual start minus scheduled firing time, per pipeline")
                       .Register(*registry_)),
      runs_queued_(prometheus::BuildGauge()
                       .Name("tidemark_runs_queued")
                       .Help("Firings waiting for a free worker")
                       .Register(*registry_)),
      reload_ok_(prometheus::BuildGauge()
                     .Name("tidemark_config_last_reload_successful")
                     .Help("1 when the last configuration (re)load succeeded")
                     .Register(*registry_)),
      db_up_(prometheus::BuildGauge()
                 .Name("tidemark_db_up")
                 .Help("1 when the last connection attempt to the database succeeded")
                 .Register(*registry_)),
      build_info_(prometheus::BuildGauge()
                      .Name("tidemark_build_info")
                      .Help("Always 1; the version is a label")
                      .Register(*registry_)) {
  build_info_.Add({{"version", kVersion}}).Set(1);
  runs_queued_series_ = &runs_queued_.Add({});
  reload_ok_series_ = &reload_ok_.Add({});
  reload_ok_series_->Set(1);
}

MetricsRegistry::~MetricsRegistry() = default;

MetricsRegistry::TableSeries* MetricsRegistry::find(const TableKey& table) {
  const auto it = tables_.find({table.pipeline, table.table});
  return it == tables_.end() ? nullptr : it->second.get();
}

void MetricsRegistry::add_table(const PipelineConfig& pipeline, const TableConfig& table) {
  auto s = std::make_unique<TableSeries>();
  const prometheus::Labels labels = table_labels(pipeline.name, table.name);
  s->stale_after_seconds = static_cast<double>(table.stale_after.count());
  s->age = &watermark_age_.Add(labels);
  s->age->Set(std::nan(""));  // unknown until the state says otherwise
  s->moved = &watermark_moved_.Add(labels);
  s->moved->Set(std::nan(""));
  s->stale = &watermark_stale_.Add(labels);
  s->stale_after = &stale_after_.Add(labels);
  s->stale_after->Set(s->stale_after_seconds);
  s->last_rows = &last_run_rows_.Add(labels);
  s->rows_written = &rows_written_.Add(labels);
  s->runs_success = &runs_.Add(with(labels, "status", "success"));
  s->runs_failed_transient = &runs_.Add(with(with(labels, "status", "failed"), "error", "transient"));
  s->runs_failed_permanent = &runs_.Add(with(with(labels, "status", "failed"), "error", "permanent"));
  s->skipped_locked = &runs_skipped_.Add(with(labels, "reason", "locked"));
  s->skipped_overrun = &runs_skipped_.Add(with(labels, "reason", "overrun"));
  s->last_duration = &last_run_duration_.Add(labels);
  s->last_success = &last_success_.Add(labels);
  s->last_success->Set(std::nan(""));
  s->in_progress = &run_in_progress_.Add(labels);
  s->horizon_lag = &horizon_lag_.Add(labels);
  s->horizon_lag->Set(std::nan(""));  // known once an incremental run has read the horizon
  s->failed_permanently = &failed_permanently_.Add(labels);
  s->schema_drift = &schema_drift_.Add(labels);
  s->reconcile_deleted = &reconcile_deleted_.Add(labels);
  s->reconcile_missing = &reconcile_missing_.Add(labels);
  tables_[{pipeline.name, table.name}] = std::move(s);

  auto& p = pipelines_[pipeline.name];
  if (!p) {
    p = std::make_unique<PipelineSeries>();
    p->duration = &run_duration_.Add({{"pipeline", pipeline.name}}, kDurationBuckets);
    p->start_delay = &start_delay_.Add({{"pipeline", pipeline.name}}, kDelayBuckets);
  }
  ++p->tables;
}

void MetricsRegistry::remove_table(const TableKey& key) {
  const auto it = tables_.find({key.pipeline, key.table});
  if (it == tables_.end()) return;
  TableSeries& s = *it->second;
  if (s.watermark_timestamp) watermark_timestamp_.Remove(s.watermark_timestamp);
  watermark_age_.Remove(s.age);
  watermark_moved_.Remove(s.moved);
  watermark_stale_.Remove(s.stale);
  stale_after_.Remove(s.stale_after);
  last_run_rows_.Remove(s.last_rows);
  rows_written_.Remove(s.rows_written);
  runs_.Remove(s.runs_success);
  runs_.Remove(s.runs_failed_transient);
  runs_.Remove(s.runs_failed_permanent);
  runs_skipped_.Remove(s.skipped_locked);
  runs_skipped_.Remove(s.skipped_overrun);
  last_run_duration_.Remove(s.last_duration);
  last_success_.Remove(s.last_success);
  run_in_progress_.Remove(s.in_progress);
  horizon_lag_.Remove(s.horizon_lag);
  failed_permanently_.Remove(s.failed_permanently);
  schema_drift_.Remove(s.schema_drift);
  reconcile_deleted_.Remove(s.reconcile_deleted);
  reconcile_missing_.Remove(s.reconcile_missing);
  tables_.erase(it);

  const auto p = pipelines_.find(key.pipeline);
  if (p != pipelines_.end() && --p->second->tables == 0) {
    run_duration_.Remove(p->second->duration);
    start_delay_.Remove(p->second->start_delay);
    pipelines_.erase(p);
  }
}

void MetricsRegistry::set_config(const Config& config) {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::map<std::pair<std::string, std::string>, const PipelineConfig*> wanted;
  for (const PipelineConfig& p : config.pipelines) {
    for (const TableConfig& t : p.tables) wanted[{p.name, t.name}] = &p;
  }
  std::vector<TableKey> gone;
  for (const auto& [key, series] : tables_) {
    if (!wanted.count(key)) gone.push_back({key.first, key.second});
  }
  for (const TableKey& key : gone) remove_table(key);
  for (const PipelineConfig& p : config.pipelines) {
    for (const TableConfig& t : p.tables) {
      if (TableSeries* s = find({p.name, t.name})) {
        s->stale_after_seconds = static_cast<double>(t.stale_after.count());
        s->stale_after->Set(s->stale_after_seconds);
      } else {
        add_table(p, t);
      }
    }
  }
  std::vector<std::string> connections;
  for (const ConnectionConfig& c : config.daemon.connections) connections.push_back(c.name);
  for (auto it = db_up_series_.begin(); it != db_up_series_.end();) {
    if (std::find(connections.begin(), connections.end(), it->first) == connections.end()) {
      db_up_.Remove(it->second);
      it = db_up_series_.erase(it);
    } else {
      ++it;
    }
  }
  for (const std::string& name : connections) {
    if (!db_up_series_.count(name)) db_up_series_[name] = &db_up_.Add({{"connection", name}});
  }
}

void MetricsRegistry::on_chunk_committed(const TableKey&, const Window&, const ChunkCounts&, const CursorValue&) {
  // Rows are counted once per run, in on_run_finished; the watermark
  // gauges follow the state database (table_progress).
}

void MetricsRegistry::on_run_finished(const RunSummary& summary) {
  const std::lock_guard<std::mutex> lock(mutex_);
  TableSeries* s = find(summary.table);
  if (s == nullptr) return;  // dropped by a reload while it ran
  switch (summary.status) {
    case RunStatus::Success:
      s->runs_success->Increment();
      s->failed_permanently->Set(0);
      s->last_rows->Set(static_cast<double>(summary.rows_written));
      s->last_success->Set(static_cast<double>(
          std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
              .count()));
      break;
    case RunStatus::SkippedLocked: s->skipped_locked->Increment(); break;
    case RunStatus::Failed:
      (summary.error_kind == ErrorKind::Permanent ? s->runs_failed_permanent : s->runs_failed_transient)->Increment();
      // A transient failure says nothing of whether the permanent cause is
      // gone: the table stays flagged until a run succeeds.
      if (summary.error_kind == ErrorKind::Permanent) s->failed_permanently->Set(1);
      break;
    // Stopped by a shutdown: another run would have gone on.
    case RunStatus::Cancelled: s->runs_failed_transient->Increment(); break;
  }
  s->rows_written->Increment(static_cast<double>(summary.rows_written));
  if (summary.horizon.lag_seconds) s->horizon_lag->Set(*summary.horizon.lag_seconds);
  // Only a run that compared the columns knows: one that failed before
  // (a database down) leaves the gauge as it was.
  if (summary.schema_drift) s->schema_drift->Set(*summary.schema_drift ? 1 : 0);
}

void MetricsRegistry::run_started(const TableKey& table, std::chrono::duration<double> start_delay) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (TableSeries* s = find(table)) s->in_progress->Set(1);
  const auto p = pipelines_.find(table.pipeline);
  if (p != pipelines_.end()) p->second->start_delay->Observe(std::max(0.0, start_delay.count()));
}

void MetricsRegistry::run_ended(const TableKey& table, std::chrono::duration<double> duration) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (TableSeries* s = find(table)) {
    s->in_progress->Set(0);
    s->last_duration->Set(duration.count());
  }
  const auto p = pipelines_.find(table.pipeline);
  if (p != pipelines_.end()) p->second->duration->Observe(duration.count());
}

void MetricsRegistry::run_skipped(const TableKey& table, SkipReason reason) {
  const std::lock_guard<std::mutex> lock(mutex_);
  TableSeries* s = find(table);
  if (s == nullptr) return;
  switch (reason) {
    case SkipReason::Locked: s->skipped_locked->Increment(); break;
    case SkipReason::Overrun: s->skipped_overrun->Increment(); break;
  }
}

void MetricsRegistry::table_progress(const TableKey& table, const TableProgress& progress, double now) {
  const std::lock_guard<std::mutex> lock(mutex_);
  TableSeries* s = find(table);
  if (s == nullptr) return;
  if (progress.watermark_unix) {
    if (!s->watermark_timestamp) s->watermark_timestamp = &watermark_timestamp_.Add(table_labels(table.pipeline, table.table));
    s->watermark_timestamp->Set(*progress.watermark_unix);
  } else if (s->watermark_timestamp) {
    watermark_timestamp_.Remove(s->watermark_timestamp);
    s->watermark_timestamp = nullptr;
  }
  WatermarkReading reading;
  reading.watermark_unix = progress.watermark_unix;
  reading.moved_unix = progress.moved_unix;
  reading.ahead_of_source = progress.ahead;
  const WatermarkHealth health = assess_watermark(
      reading, now, std::chrono::seconds(static_cast<std::int64_t>(s->stale_after_seconds)));
  s->age->Set(health.age_seconds ? *health.age_seconds : std::nan(""));
  s->moved->Set(progress.moved_unix ? *progress.moved_unix : std::nan(""));
  s->stale->Set(health.stale() ? 1 : 0);
  if (progress.last_success_unix) s->last_success->Set(*progress.last_success_unix);
  if (progress.schema_drift) s->schema_drift->Set(*progress.schema_drift ? 1 : 0);
}

void MetricsRegistry::schema_drift(const TableKey& table, bool drifted) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (TableSeries* s = find(table)) s->schema_drift->Set(drifted ? 1 : 0);
}

void MetricsRegistry::reconcile_finished(const TableKey& table, std::int64_t deleted, std::int64_t missing) {
  const std::lock_guard<std::mutex> lock(mutex_);
  TableSeries* s = find(table);
  if (s == nullptr) return;
  s->reconcile_deleted->Set(static_cast<double>(deleted));
  s->reconcile_missing->Set(static_cast<double>(missing));
}

void MetricsRegistry::database_up(const std::string& connection, bool up) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto it = db_up_series_.find(connection);
  if (it != db_up_series_.end()) it->second->Set(up ? 1 : 0);
}

void MetricsRegistry::set_queued(std::size_t waiting) {
  const std::lock_guard<std::mutex> lock(mutex_);
  runs_queued_series_->Set(static_cast<double>(waiting));
}

void MetricsRegistry::reload_succeeded(bool ok) {
  const std::lock_guard<std::mutex> lock(mutex_);
  reload_ok_series_->Set(ok ? 1 : 0);
}

std::vector<prometheus::MetricFamily> MetricsRegistry::collect() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return registry_->Collect();
}

std::string MetricsRegistry::scrape_text() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, registry_->Collect());
  return out.str();
}

}  // namespace tidemark
