// The Prometheus series of SPEC §6 (HttpEndpoint serves them).
// Every series of a configured table is created when the table appears
// (counters at 0) and removed when a reload drops it; all access goes
// through this class under one mutex, so no caller ever holds a reference
// to a series that a reload removed. Thread-safe: runs report from worker
// threads, the loop reloads, the state monitor refreshes watermarks.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/config/config_model.h"
#include "core/run/run_observer.h"

namespace tidemark {

enum class SkipReason { Locked, Overrun };

// What the state database says about a table (see StateMonitor).
struct TableProgress {
  std::optional<double> watermark_unix;  // time cursors and partitions; nothing for integers
  std::optional<double> moved_unix;      // when the watermark last moved
  std::optional<double> last_success_unix;
  bool ahead = false;  // the last run found the watermark above the source's safe horizon
  // Whether the latest finished run that compared columns found schema
  // drift; nothing when it did not compare (the gauge keeps its value).
  std::optional<bool> schema_drift;
};


class MetricsRegistry final : public RunObserver {
 public:
  MetricsRegistry();
  ~MetricsRegistry() override;

  // Creates the series of every table in `config` and removes those of
  // tables it no longer has.
  void set_config(const Config& config);

  // RunObserver: a run or partition finished / a chunk committed.
  void on_chunk_committed(const TableKey& table, const Window& window, const ChunkCounts& counts,
                          const CursorValue& watermark) override;
  void on_run_finished(const RunSummary& summary) override;

  void run_started(const TableKey& table, std::chrono::duration<double> start_delay);
  void run_ended(const TableKey& table, std::chrono::duration<double> duration);
  void run_skipped(const TableKey& table, SkipReason reason);
  // How many firings wait for a free worker.
  void set_queued(std::size_t waiting);
  // Recomputes age and stale (core/watermark_health.h) against `now`:
  // Unix seconds on the clock `progress` was read with, the state
  // database's.
  void table_progress(const TableKey& table, const TableProgress& progress, double now);
  // 1 while the table's source columns no longer match what it loads.
  void schema_drift(const TableKey& table, bool drifted);
  // The counts of the table's last reconcile (rows deleted or marked in
  // the target; source rows below the watermark the target lacked).
  void reconcile_finished(const TableKey& table, std::int64_t deleted, std::int64_t missing);
  void database_up(const std::string& connection, bool up);
  void reload_succeeded(bool ok);

  // Every series, for the HTTP endpoint to serialize.
  std::vector<prometheus::MetricFamily> collect() const;
  // The registry's series in Prometheus' text format, for tests.
  std::string scrape_text() const;

 private:
  struct TableSeries;
  struct PipelineSeries;

  TableSeries* find(const TableKey& table);  // requires mutex_
  void add_table(const PipelineConfig& pipeline, const TableConfig& table);  // requires mutex_
  void remove_table(const TableKey& key);                                     // requires mutex_

  std::shared_ptr<prometheus::Registry> registry_;

  prometheus::Family<prometheus::Gauge>& watermark_timestamp_;
  prometheus::Family<prometheus::Gauge>& watermark_age_;
  prometheus::Family<prometheus::Gauge>& watermark_moved_;
  prometheus::Family<prometheus::Gauge>& watermark_stale_;
  prometheus::Family<prometheus::Gauge>& stale_after_;
  prometheus::Family<prometheus::Gauge>& last_run_rows_;
  prometheus::Family<prometheus::Counter>& rows_written_;
  prometheus::Family<prometheus::Counter>& runs_;
  prometheus::Family<prometheus::Counter>& runs_skipped_;
  prometheus::Family<prometheus::Histogram>& run_duration_;
  prometheus::Family<prometheus::Gauge>& last_run_duration_;
  prometheus::Family<prometheus::Gauge>& last_success_;
  prometheus::Family<prometheus::Gauge>& run_in_progress_;
  prometheus::Family<prometheus::Gauge>& horizon_lag_;
  prometheus::Family<prometheus::Gauge>& failed_permanently_;
  prometheus::Family<prometheus::Gauge>& schema_drift_;
  prometheus::Family<prometheus::Gauge>& reconcile_deleted_;
  prometheus::Family<prometheus::Gauge>& reconcile_missing_;
  prometheus::Family<prometheus::Histogram>& start_delay_;
  prometheus::Family<prometheus::Gauge>& runs_queued_;
  prometheus::Family<prometheus::Gauge>& reload_ok_;
  prometheus::Family<prometheus::Gauge>& db_up_;
  prometheus::Family<prometheus::Gauge>& build_info_;

  mutable std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, std::unique_ptr<TableSeries>> tables_;
  std::map<std::string, std::unique_ptr<PipelineSeries>> pipelines_;
  std::map<std::string, prometheus::Gauge*> db_up_series_;
  prometheus::Gauge* runs_queued_series_ = nullptr;
  prometheus::Gauge* reload_ok_series_ = nullptr;
};

}  // namespace tidemark
