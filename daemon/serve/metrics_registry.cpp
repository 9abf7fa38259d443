#include "daemon/serve/metrics_registry.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

#include "core/schedule/job_kinds.h"
#include "core/watermark/watermark_health.h"
#include "daemon/serve/exposition_text.h"
#include "daemon/version.h"

namespace tidemark {

namespace {

// One series' value. Written only under the registry's mutex (so a load
// and a store make an increment); a scrape reads it without the mutex.
class Value {
 public:
  explicit Value(double initial = 0) : value_(initial) {}
  void set(double value) { value_.store(value, std::memory_order_relaxed); }
  void add(double delta) { set(get() + delta); }
  double get() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_;
};

constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

const std::vector<double> kDurationBuckets{0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600};
const std::vector<double> kDelayBuckets{0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300};

}  // namespace

// Every series of one table: about twenty numbers beside its two names.
struct MetricsRegistry::TableSeries {
  TableSeries(std::string pipeline_name, std::string table_name, double stale_after_seconds)
      : pipeline(std::move(pipeline_name)), table(std::move(table_name)), stale_after(stale_after_seconds) {}

  const std::string pipeline;
  const std::string table;
  Value watermark_timestamp{kUnknown};  // NaN: no time watermark known, no series
  Value age{kUnknown};                  // unknown until the state says otherwise
  Value moved{kUnknown};
  Value stale;
  Value stale_after;
  Value last_rows;
  Value rows_written;
  Value runs_success;
  Value runs_failed_transient;  // label error: whether a retry can help
  Value runs_failed_permanent;
  Value skipped_locked;
  Value skipped_overrun;
  Value last_duration;
  Value last_success{kUnknown};
  Value in_progress;
  Value horizon_lag{kUnknown};  // known once an incremental run has read the horizon
  Value failed_permanently;
  Value schema_drift;
  Value reconcile_deleted;
  Value reconcile_missing;
  Value reconcile_failed;
  Value unseen_changes;
  Value repaired_missing;  // tidemark_rows_repaired_total, by reason
  Value repaired_gone;
  Value repaired_changed;
  Value input_wait;  // 0 when no input holds the table back
  Value paused;
  Value rows_in_progress;  // read from the load's meter at each scrape
  Value progress_ratio;    // likewise
  bool ahead = false;  // what table_progress was last told
};

// A histogram's buckets (each its own count; +Inf last) and sum.
struct Histogram {
  explicit Histogram(const std::vector<double>& bucket_bounds)
      : bounds(&bucket_bounds), counts(bucket_bounds.size() + 1, 0) {}
  void observe(double value) {
    // An observation equal to a bound belongs to that bucket (le).
    const auto bucket = std::lower_bound(bounds->begin(), bounds->end(), value) - bounds->begin();
    ++counts[static_cast<std::size_t>(bucket)];
    sum += value;
  }
  const std::vector<double>* bounds;
  std::vector<std::uint64_t> counts;
  double sum = 0;
};

// Guarded by the registry's mutex; a scrape copies them (one per pipeline).
struct MetricsRegistry::PipelineSeries {
  int tables = 0;
  Histogram duration{kDurationBuckets};
  Histogram start_delay{kDelayBuckets};
};

MetricsRegistry::MetricsRegistry() = default;
MetricsRegistry::~MetricsRegistry() = default;

MetricsRegistry::TableSeries* MetricsRegistry::find(const TableKey& table) {
  const auto it = tables_.find(table);
  return it == tables_.end() ? nullptr : it->second.get();
}

MetricsRegistry::PipelineSeries* MetricsRegistry::pipeline(const std::string& name) {
  const auto it = pipelines_.find(name);
  return it == pipelines_.end() ? nullptr : &it->second;
}

void MetricsRegistry::set_config(const Config& config) {
  const std::lock_guard<std::mutex> lock(mutex_);
  expected_members_.reset();
  if (config.daemon.fleet.expect_members > 0) expected_members_ = config.daemon.fleet.expect_members;
  // Rebuilt in one pass over the new configuration: a table kept keeps its
  // record (its counters), one gone is dropped with its record, which a
  // scrape in progress may still hold (shared_ptr) but no one else.
  decltype(tables_) next;
  std::map<std::string, PipelineSeries> next_pipelines;
  for (const PipelineConfig& p : config.pipelines) {
    for (const TableConfig& t : p.tables) {
      const double stale_after = static_cast<double>(t.stale_after.count());
      std::shared_ptr<TableSeries> series;
      const auto it = tables_.find(TableKey{p.name, t.name});
      if (it != tables_.end()) {
        series = std::move(it->second);
        series->stale_after.set(stale_after);
      } else {
        series = std::make_shared<TableSeries>(p.name, t.name, stale_after);
        series->stale_after.set(stale_after);
      }
      series->paused.set(pauses_.paused(TableKey{p.name, t.name}) ? 1 : 0);
      next.emplace_hint(next.end(), Key{p.name, t.name}, std::move(series));
    }
    if (p.tables.empty()) continue;
    const auto kept = pipelines_.find(p.name);
    auto& slot = next_pipelines.emplace(p.name, kept != pipelines_.end() ? std::move(kept->second) : PipelineSeries{})
                     .first->second;
    slot.tables = static_cast<int>(p.tables.size());
  }
  tables_ = std::move(next);
  pipelines_ = std::move(next_pipelines);

  std::map<std::string, double> db_up;
  for (const ConnectionConfig& c : config.daemon.connections) {
    const auto it = db_up_.find(c.name);
    db_up[c.name] = it != db_up_.end() ? it->second : 0;
  }
  db_up_ = std::move(db_up);
}

void MetricsRegistry::job_started(const TableKey& table, JobKind kind, const RunMeter& meter) {
  set_in_progress(table, kind, &meter);
}

void MetricsRegistry::job_handed_back(const TableKey& table, JobKind kind) { set_in_progress(table, kind, nullptr); }

void MetricsRegistry::set_in_progress(const TableKey& table, JobKind kind, const RunMeter* meter) {
  if (!job_kind(kind).in_run_series) return;
  const std::lock_guard<std::mutex> lock(mutex_);
  if (meter != nullptr) {
    meters_[table] = meter;
  } else {
    meters_.erase(table);
  }
  if (TableSeries* s = find(table)) {
    s->in_progress.set(meter != nullptr ? 1 : 0);
    s->rows_in_progress.set(0);
    s->progress_ratio.set(0);
  }
}

std::vector<std::pair<TableKey, std::pair<std::int64_t, std::int64_t>>> MetricsRegistry::rows_in_progress() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::pair<TableKey, std::pair<std::int64_t, std::int64_t>>> out;
  for (const auto& [table, meter] : meters_) out.push_back({table, {meter->rows(), meter->bytes()}});
  return out;
}

void MetricsRegistry::job_ended(const JobEnded& ended) {
  const std::lock_guard<std::mutex> lock(mutex_);
  for (const RunSummary& run : ended.runs) count_run(run);
  const TableKey& table = ended.summary.table;
  TableSeries* s = find(table);  // nothing: dropped by a reload while it ran
  PipelineSeries* p = pipeline(table.pipeline);
  const double seconds = std::chrono::duration<double>(ended.duration).count();
  if (job_kind(ended.kind).in_run_series) {
    meters_.erase(table);
    if (s != nullptr) {
      s->in_progress.set(0);
      s->rows_in_progress.set(0);
      s->progress_ratio.set(0);
      s->last_duration.set(seconds);
    }
    if (p != nullptr) {
      if (ended.start_delay) p->start_delay.observe(std::max(0.0, ended.start_delay->count()));
      p->duration.observe(seconds);
    }
  }
  // A dry run's counts are what it found, not what it wrote.
  if (ended.reconcile && !ended.dry_run && s != nullptr) {
    const ReconcileCounts& done = ended.reconcile->counts;
    s->repaired_missing.add(static_cast<double>(done.missing));
    s->repaired_gone.add(static_cast<double>(done.deleted));
    s->repaired_changed.add(static_cast<double>(done.changed));
  }
}

void MetricsRegistry::count_run(const RunSummary& summary) {
  TableSeries* s = find(summary.table);
  if (s == nullptr) return;  // dropped by a reload while it ran
  switch (summary.status) {
    case RunStatus::Success:
      s->runs_success.add(1);
      s->failed_permanently.set(0);
      // last_success follows the run rows, on the state database's clock
      // (table_progress): one writer, one clock.
      s->last_rows.set(static_cast<double>(summary.rows_written));
      break;
    case RunStatus::SkippedLocked: s->skipped_locked.add(1); break;
    case RunStatus::Failed:
    case RunStatus::Cancelled: {
      const bool permanent = failure_kind(summary) == ErrorKind::Permanent;
      (permanent ? s->runs_failed_permanent : s->runs_failed_transient).add(1);
      // A transient failure says nothing of whether the permanent cause is
      // gone: the table stays flagged until a run succeeds.
      if (permanent) s->failed_permanently.set(1);
      break;
    }
  }
  s->rows_written.add(static_cast<double>(summary.rows_written));
  // A watched run counted them; a successful one that did not is a table
  // not watched (any more); a failed one may have stopped before it read.
  if (summary.changes) {
    s->unseen_changes.set(static_cast<double>(summary.changes->unseen));
  } else if (summary.status == RunStatus::Success) {
    s->unseen_changes.set(0);
  }
  if (summary.horizon.lag_seconds) {
    s->horizon_lag.set(*summary.horizon.lag_seconds);
    // Decided with the horizon; the stale gauge reads it at the next
    // table_progress, which need not read the run rows again.
    s->ahead = summary.horizon.watermark_ahead;
  }
  // Only a run that compared the columns knows: one that failed before
  // (a database down) leaves the gauge as it was.
  if (summary.schema_drift) s->schema_drift.set(*summary.schema_drift ? 1 : 0);
}

void MetricsRegistry::on_horizon(const TableKey& table, const HorizonReport& horizon) {
  const std::lock_guard<std::mutex> lock(mutex_);
  TableSeries* s = find(table);
  if (s == nullptr) return;
  s->input_wait.set(horizon.input_wait_seconds.value_or(0));
  // A partition table's firing reads the horizon too: what held it back
  // shows as it does for incremental runs.
  if (horizon.lag_seconds) s->horizon_lag.set(*horizon.lag_seconds);
}

void MetricsRegistry::run_skipped(const TableKey& table, SkipReason reason) {
  const std::lock_guard<std::mutex> lock(mutex_);
  TableSeries* s = find(table);
  if (s == nullptr) return;
  switch (reason) {
    case SkipReason::Locked: s->skipped_locked.add(1); break;
    case SkipReason::Overrun: s->skipped_overrun.add(1); break;
  }
}

void MetricsRegistry::table_progress(const TableKey& table, const TableProgress& progress, double now) {
  const std::lock_guard<std::mutex> lock(mutex_);
  TableSeries* s = find(table);
  if (s == nullptr) return;
  s->watermark_timestamp.set(progress.watermark_unix ? *progress.watermark_unix : kUnknown);
  WatermarkReading reading;
  reading.watermark_unix = progress.watermark_unix;
  reading.moved_unix = progress.moved_unix;
  if (progress.ahead) s->ahead = *progress.ahead;
  reading.ahead_of_source = s->ahead;
  const WatermarkHealth health = assess_watermark(
      reading, now, std::chrono::seconds(static_cast<std::int64_t>(s->stale_after.get())));
  s->age.set(health.age_seconds ? *health.age_seconds : kUnknown);
  s->moved.set(progress.moved_unix ? *progress.moved_unix : kUnknown);
  s->stale.set(health.stale() ? 1 : 0);
  if (progress.last_success_unix) s->last_success.set(*progress.last_success_unix);
  if (progress.schema_drift) s->schema_drift.set(*progress.schema_drift ? 1 : 0);
}

void MetricsRegistry::set_pauses(const PauseSet& pauses) {
  const std::lock_guard<std::mutex> lock(mutex_);
  pauses_ = pauses;
  for (auto& [key, series] : tables_) series->paused.set(pauses_.paused(TableKey{key.first, key.second}) ? 1 : 0);
}

void MetricsRegistry::schema_drift(const TableKey& table, bool drifted) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (TableSeries* s = find(table)) s->schema_drift.set(drifted ? 1 : 0);
}

void MetricsRegistry::reconcile_finished(const TableKey& table, std::int64_t deleted, std::int64_t missing) {
  const std::lock_guard<std::mutex> lock(mutex_);
  TableSeries* s = find(table);
  if (s == nullptr) return;
  s->reconcile_deleted.set(static_cast<double>(deleted));
  s->reconcile_missing.set(static_cast<double>(missing));
}

void MetricsRegistry::reconcile_failed(const TableKey& table, bool failed) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (TableSeries* s = find(table)) s->reconcile_failed.set(failed ? 1 : 0);
}

void MetricsRegistry::unseen_changes(const TableKey& table, std::int64_t changes) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (TableSeries* s = find(table)) s->unseen_changes.set(static_cast<double>(changes));
}

void MetricsRegistry::database_up(const std::string& connection, bool up) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto it = db_up_.find(connection);
  if (it != db_up_.end()) it->second = up ? 1 : 0;
}

void MetricsRegistry::set_queued(std::size_t waiting) {
  const std::lock_guard<std::mutex> lock(mutex_);
  runs_queued_ = static_cast<double>(waiting);
}

void MetricsRegistry::reload_succeeded(bool ok) {
  const std::lock_guard<std::mutex> lock(mutex_);
  reload_ok_ = ok ? 1 : 0;
}

void MetricsRegistry::state_bytes(std::int64_t bytes) {
  const std::lock_guard<std::mutex> lock(mutex_);
  state_bytes_ = static_cast<double>(bytes);
}

void MetricsRegistry::fleet_view(std::size_t members, std::size_t owned, std::size_t changes) {
  const std::lock_guard<std::mutex> lock(mutex_);
  fleet_members_ = static_cast<double>(members);
  tables_owned_ = static_cast<double>(owned);
  ownership_changes_ += static_cast<double>(changes);
}

void MetricsRegistry::fleet_lapsed() {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (tables_owned_) tables_owned_ = 0;
}

// A family of one gauge or counter per table, labelled pipeline and table:
// adding one is a line below, a Value in TableSeries and its writer.
struct MetricsRegistry::TableFamily {
  const char* name;
  const char* help;
  const char* type;
  Value TableSeries::*member;
};

// Served after tidemark_watermark_timestamp_seconds, in this order.
const MetricsRegistry::TableFamily MetricsRegistry::kWatermarkFamilies[] = {
    {"tidemark_watermark_age_seconds", "Now minus the watermark (integer cursors: now minus when it last moved)",
     "gauge", &TableSeries::age},
    {"tidemark_watermark_last_moved_timestamp_seconds", "When the watermark last moved, as Unix time", "gauge",
     &TableSeries::moved},
    {"tidemark_watermark_stale", "1 when the watermark is older than stale_after, or ahead of the source", "gauge",
     &TableSeries::stale},
    {"tidemark_watermark_stale_after_seconds", "The configured stale_after threshold", "gauge",
     &TableSeries::stale_after},
    {"tidemark_last_run_rows", "Rows written by the last successful run", "gauge", &TableSeries::last_rows},
    {"tidemark_rows_written_total", "Rows written to the target", "counter", &TableSeries::rows_written},
};

// Served after tidemark_run_duration_seconds, in this order.
const MetricsRegistry::TableFamily MetricsRegistry::kRunFamilies[] = {
    {"tidemark_last_run_duration_seconds", "Duration of the table's last run", "gauge", &TableSeries::last_duration},
    {"tidemark_last_success_timestamp_seconds", "When the table's last successful run finished, as Unix time",
     "gauge", &TableSeries::last_success},
    {"tidemark_run_in_progress", "1 while a run of the table is in flight", "gauge", &TableSeries::in_progress},
    {"tidemark_run_rows_in_progress", "Rows the table's run in flight has copied so far; 0 when none is", "gauge",
     &TableSeries::rows_in_progress},
    {"tidemark_run_progress_ratio",
     "Share of its ranges a ranged first load in flight has committed, 0 to 1; 0 when none is", "gauge",
     &TableSeries::progress_ratio},
    {"tidemark_horizon_lag_seconds", "Source clock minus the last run's hi: what transactions in flight held back",
     "gauge", &TableSeries::horizon_lag},
    {"tidemark_run_failed_permanently", "1 from a run that failed permanently (not retried) until a run succeeds",
     "gauge", &TableSeries::failed_permanently},
    {"tidemark_schema_drift", "1 while the source's columns no longer match what the table loads", "gauge",
     &TableSeries::schema_drift},
    {"tidemark_reconcile_deleted_rows", "Target rows whose key left the source, found by the last reconcile", "gauge",
     &TableSeries::reconcile_deleted},
    {"tidemark_reconcile_missing_rows", "Source rows below the watermark the target lacked at the last reconcile",
     "gauge", &TableSeries::reconcile_missing},
    {"tidemark_reconcile_failed", "1 while the table's latest reconcile failed", "gauge",
     &TableSeries::reconcile_failed},
    {"tidemark_unseen_changes",
     "Updates and deletes the source counted that the table's insert-only cursor cannot see, since it last ran clean",
     "gauge", &TableSeries::unseen_changes},
    {"tidemark_input_wait_seconds", "How long an input (inputs:) has held the table back; 0 when none does", "gauge",
     &TableSeries::input_wait},
    {"tidemark_table_paused", "1 while the table is paused (tidemark pause); the stale and failing alerts leave it alone",
     "gauge", &TableSeries::paused},
};

void MetricsRegistry::write_text(std::string& out) const {
  // Under the mutex only the copy: the records (shared, so a reload that
  // drops a table frees it after this scrape), the pipelines' histograms
  // and the few daemon-wide values. The text is written without it.
  std::vector<std::shared_ptr<const TableSeries>> tables;
  std::vector<std::pair<std::string, PipelineSeries>> pipelines;
  std::vector<std::pair<std::string, double>> db_up;
  double runs_queued = 0;
  double reload_ok = 0;
  std::optional<double> state_bytes;
  std::optional<double> fleet_members;
  std::optional<double> tables_owned;
  double ownership_changes = 0;
  std::optional<double> expected_members;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [table, meter] : meters_) {
      const auto it = tables_.find(table);
      if (it == tables_.end()) continue;
      it->second->rows_in_progress.set(static_cast<double>(meter->rows()));
      it->second->progress_ratio.set(meter->ranges_share());
    }
    tables.reserve(tables_.size());
    for (const auto& entry : tables_) tables.push_back(entry.second);
    pipelines.assign(pipelines_.begin(), pipelines_.end());
    db_up.assign(db_up_.begin(), db_up_.end());
    runs_queued = runs_queued_;
    reload_ok = reload_ok_;
    state_bytes = state_bytes_;
    fleet_members = fleet_members_;
    tables_owned = tables_owned_;
    ownership_changes = ownership_changes_;
    expected_members = expected_members_;
  }

  // Reserved once, generously (about twenty lines per table): growing a
  // string of 64 MB by doubling holds the old copy and the new at once,
  // while reserved pages never written cost no memory.
  std::size_t estimate = 8192 + pipelines.size() * 8192;
  for (const auto& s : tables) estimate += 22 * (100 + s->pipeline.size() + s->table.size());
  out.reserve(out.size() + estimate);

  ExpositionText text(out);
  // One gauge or counter per table, labelled pipeline and table.
  // A family without a series is left out, HELP and TYPE too, as
  // prometheus-cpp left it out.
  const auto per_table = [&](const TableFamily& f) {
    if (tables.empty()) return;
    text.family(f.name, f.help, f.type);
    for (const auto& s : tables) {
      text.sample(f.name, {{"pipeline", s->pipeline}, {"table", s->table}}, ((*s).*f.member).get());
    }
  };
  const auto per_pipeline = [&](const char* name, const char* help, Histogram PipelineSeries::*member) {
    if (pipelines.empty()) return;
    text.family(name, help, "histogram");
    for (const auto& [pipeline_name, p] : pipelines) {
      const Histogram& h = p.*member;
      text.histogram(name, {{"pipeline", pipeline_name}}, *h.bounds, h.counts, h.sum);
    }
  };

  // The families in the order they have always been served.
  bool timestamps = false;
  for (const auto& s : tables) {
    const double value = s->watermark_timestamp.get();
    if (!std::isnan(value)) {
      if (!timestamps) {
        text.family("tidemark_watermark_timestamp_seconds",
                    "The stored watermark as Unix time (time cursors and partitions)", "gauge");
        timestamps = true;
      }
      text.sample("tidemark_watermark_timestamp_seconds", {{"pipeline", s->pipeline}, {"table", s->table}}, value);
    }
  }
  for (const TableFamily& f : kWatermarkFamilies) per_table(f);
  if (!tables.empty()) {
    text.family("tidemark_runs_total",
                "Finished runs by status; failed ones by error kind (transient: retried; permanent: not)", "counter");
    for (const auto& s : tables) {
      text.sample("tidemark_runs_total", {{"pipeline", s->pipeline}, {"status", "success"}, {"table", s->table}},
                  s->runs_success.get());
      for (const auto& [kind, count] : {std::pair(ErrorKind::Transient, &s->runs_failed_transient),
                                         std::pair(ErrorKind::Permanent, &s->runs_failed_permanent)}) {
        text.sample("tidemark_runs_total",
                    {{"error", std::string(error_kind_name(kind))}, {"pipeline", s->pipeline}, {"status", "failed"},
                     {"table", s->table}},
                    count->get());
      }
    }
    text.family("tidemark_runs_skipped_total", "Firings that did not start a run, by reason", "counter");
    for (const auto& s : tables) {
      text.sample("tidemark_runs_skipped_total", {{"pipeline", s->pipeline}, {"reason", "locked"}, {"table", s->table}},
                  s->skipped_locked.get());
      text.sample("tidemark_runs_skipped_total", {{"pipeline", s->pipeline}, {"reason", "overrun"}, {"table", s->table}},
                  s->skipped_overrun.get());
    }
  }
  per_pipeline("tidemark_run_duration_seconds", "Run durations, per pipeline", &PipelineSeries::duration);
  for (const TableFamily& f : kRunFamilies) per_table(f);
  if (!tables.empty()) {
    text.family("tidemark_rows_repaired_total", "Rows reconcile copied again or removed, by reason", "counter");
    for (const auto& s : tables) {
      for (const auto& [reason, count] : {std::pair("changed", &s->repaired_changed),
                                           std::pair("gone", &s->repaired_gone),
                                           std::pair("missing", &s->repaired_missing)}) {
        text.sample("tidemark_rows_repaired_total", {{"pipeline", s->pipeline}, {"reason", reason}, {"table", s->table}},
                    count->get());
      }
    }
  }
  per_pipeline("tidemark_run_start_delay_seconds", "Actual start minus scheduled firing time, per pipeline",
               &PipelineSeries::start_delay);

  text.family("tidemark_runs_queued", "Firings waiting for a free worker", "gauge");
  text.sample("tidemark_runs_queued", {}, runs_queued);
  text.family("tidemark_config_last_reload_successful", "1 when the last configuration (re)load succeeded", "gauge");
  text.sample("tidemark_config_last_reload_successful", {}, reload_ok);
  if (!db_up.empty()) {
    text.family("tidemark_db_up", "1 when the last connection attempt to the database succeeded", "gauge");
  }
  for (const auto& [connection, up] : db_up) text.sample("tidemark_db_up", {{"connection", connection}}, up);
  if (state_bytes) {
    text.family("tidemark_state_bytes", "Disk used by the tidemark schema in the state database", "gauge");
    text.sample("tidemark_state_bytes", {}, *state_bytes);
  }
  if (fleet_members) {
    text.family("tidemark_fleet_members", "Live members of the fleet, as this member last saw them", "gauge");
    text.sample("tidemark_fleet_members", {}, *fleet_members);
    text.family("tidemark_tables_owned", "Tables (and reconcile jobs) this member owns", "gauge");
    text.sample("tidemark_tables_owned", {}, *tables_owned);
  }
  text.family("tidemark_ownership_changes_total", "Tables (and reconcile jobs) this member gained or lost", "counter");
  text.sample("tidemark_ownership_changes_total", {}, ownership_changes);
  if (expected_members) {
    text.family("tidemark_fleet_expected_members", "fleet.expect_members: the members the fleet should have",
                "gauge");
    text.sample("tidemark_fleet_expected_members", {}, *expected_members);
  }
  text.family("tidemark_build_info", "Always 1; the version is a label", "gauge");
  text.sample("tidemark_build_info", {{"version", kVersion}}, 1);
}

std::string MetricsRegistry::scrape_text() const {
  std::string out;
  write_text(out);
  return out;
}

}  // namespace tidemark
