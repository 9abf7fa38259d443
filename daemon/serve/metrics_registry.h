// The Prometheus series of SPEC §6, and their text (HttpEndpoint serves
// it). A table's series live in one record of plain values, created with
// the table (counters at 0) and dropped when a reload removes it; a scrape
// copies the list of records under the mutex and writes the text from that
// copy, so it neither holds the mutex while it writes nor sees a record
// freed under it. A job's figures arrive once, at its end (JobEnds); the
// watermark gauges follow the state database (table_progress).
// Thread-safe: jobs report from worker threads, the loop
// reloads, the state monitor refreshes watermarks, the HTTP thread scrapes.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/config/config_model.h"
#include "core/run/run_observer.h"
#include "core/schedule/job_ends.h"
#include "core/schedule/pause_set.h"

namespace tidemark {

enum class SkipReason { Locked, Overrun };

// What the state database says about a table (see StateMonitor).
struct TableProgress {
  std::optional<double> watermark_unix;  // time cursors and partitions; nothing for integers
  std::optional<double> moved_unix;      // when the watermark last moved
  std::optional<double> last_success_unix;
  // The last run found the watermark above the source's safe horizon;
  // nothing when not read: the last value holds.
  std::optional<bool> ahead;
  // Whether the latest finished run that compared columns found schema
  // drift; nothing when it did not compare (the gauge keeps its value).
  std::optional<bool> schema_drift;
};


class MetricsRegistry final : public RunObserver, public JobEnds {
 public:
  MetricsRegistry();
  ~MetricsRegistry() override;

  // Creates the series of every table in `config` and removes those of
  // tables it no longer has.
  void set_config(const Config& config);

  // RunObserver: a run decided its horizon: how long an input holds the
  // table back (tidemark_input_wait_seconds), and for a partition table's
  // firing the horizon's lag.
  void on_horizon(const TableKey& table, const HorizonReport& horizon) override;

  // JobEnds: a job's table is in progress from its start (a job in the run
  // series, job_kinds.h) until it ends or a batch hands it back; its end
  // counts its runs, its duration and start delay, a reconcile's rows
  // repaired (what its batches committed, even when a later one failed).
  void job_started(const TableKey& table, JobKind kind, const RunMeter& meter) override;
  void job_ended(const JobEnded& ended) override;
  void job_handed_back(const TableKey& table, JobKind kind) override;

  void run_skipped(const TableKey& table, SkipReason reason);
  // How many firings wait for a free worker.
  void set_queued(std::size_t waiting);
  // Recomputes age and stale (core/watermark_health.h) against `now`:
  // Unix seconds on the clock `progress` was read with, the state
  // database's.
  void table_progress(const TableKey& table, const TableProgress& progress, double now);
  // Each load in flight, with the rows and bytes its copies streamed so
  // far: what the state's progress rows say to `status`.
  std::vector<std::pair<TableKey, std::pair<std::int64_t, std::int64_t>>> rows_in_progress() const;
  // 1 for each table `pauses` holds, 0 for the others; kept for the
  // tables a reload adds.
  void set_pauses(const PauseSet& pauses);
  // 1 while the table's source columns no longer match what it loads.
  void schema_drift(const TableKey& table, bool drifted);
  // The counts of the table's last reconcile (rows deleted or marked in
  // the target; source rows below the watermark the target lacked).
  void reconcile_finished(const TableKey& table, std::int64_t deleted, std::int64_t missing);
  // 1 while the table's latest reconcile failed.
  void reconcile_failed(const TableKey& table, bool failed);
  // Updates and deletes the table's insert-only cursor could not see, as
  // the state says (core/run/change_watch.h); runs set it as they finish.
  void unseen_changes(const TableKey& table, std::int64_t changes);
  void database_up(const std::string& connection, bool up);
  void reload_succeeded(bool ok);
  // Disk used by the state schema, as last measured (tidemark_state_bytes;
  // absent until measured once).
  void state_bytes(std::int64_t bytes);
  // What this member's last view of the fleet gave it: the live members
  // it sees and the jobs it owns (absent until the first view), and the
  // tables it gained or lost by that view.
  void fleet_view(std::size_t members, std::size_t owned, std::size_t changes);
  // This member's lease may have ended by its own clock: it owns nothing.
  void fleet_lapsed();

  // Every series in Prometheus' text format, appended to `out`.
  void write_text(std::string& out) const;
  // The same, as a string (tests).
  std::string scrape_text() const;

 private:
  struct TableSeries;
  struct PipelineSeries;
  // The families of one gauge or counter per table, in the order served.
  struct TableFamily;
  static const TableFamily kWatermarkFamilies[];
  static const TableFamily kRunFamilies[];
  // Names compared without building a pair of strings for each lookup.
  using Key = std::pair<std::string, std::string>;
  struct KeyLess {
    using is_transparent = void;
    bool operator()(const Key& a, const Key& b) const { return a < b; }
    bool operator()(const Key& a, const TableKey& b) const {
      return std::tie(a.first, a.second) < std::tie(b.pipeline, b.table);
    }
    bool operator()(const TableKey& a, const Key& b) const {
      return std::tie(a.pipeline, a.table) < std::tie(b.first, b.second);
    }
  };

  TableSeries* find(const TableKey& table);     // requires mutex_
  // A run closed: its status, rows, unseen changes, horizon and drift.
  void count_run(const RunSummary& summary);  // requires mutex_
  // A job in the run series starts (its meter) or ends (nothing).
  void set_in_progress(const TableKey& table, JobKind kind, const RunMeter* meter);
  PipelineSeries* pipeline(const std::string& name);  // requires mutex_

  mutable std::mutex mutex_;
  // In (pipeline, table) order, which is the order of the scrape.
  std::map<Key, std::shared_ptr<TableSeries>, KeyLess> tables_;
  std::map<std::string, PipelineSeries> pipelines_;
  std::map<std::string, double> db_up_;  // by connection name
  double runs_queued_ = 0;
  double reload_ok_ = 1;
  std::optional<double> state_bytes_;
  std::optional<double> fleet_members_;
  std::optional<double> tables_owned_;
  double ownership_changes_ = 0;
  std::optional<double> expected_members_;  // fleet.expect_members, when set
  PauseSet pauses_;
  // The meters of the loads in flight (job_started to job_ended): what
  // tidemark_run_rows_in_progress reads at each scrape.
  std::map<TableKey, const RunMeter*> meters_;
};

}  // namespace tidemark
