// Keeps the watermark gauges true: every interval it reads each table's
// watermark, when it moved and its last success from the state database,
// with that database's clock (StateReader), the state schema's size, and
// tries every database for tidemark_db_up; what it found of the state
// database is also /readyz's answer. After runs it reads only what those
// runs changed (a load: the watermark and last success; a reconcile: its
// gauges), at most once a second, so a run costs the state database a few
// index probes; the refresh every interval reads the tables not read for
// kReadAllEvery (every table after a reload), so tables that run often are
// not read twice. Every 2 s it records how far the loads in flight have
// copied, for `status`. It applies the state schema until that
// succeeds once, and prunes the run history every ten minutes. Owns one
// background thread, which keeps one state session between refreshes;
// every public method is thread-safe. Hears jobs' ends as a JobEnds.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "core/config/config_model.h"
#include "core/run/table_key.h"
#include "core/schedule/job_ends.h"
#include "daemon/serve/health_state.h"
#include "daemon/serve/metrics_registry.h"

namespace tidemark {

class PgConnection;

class StateMonitor final : public JobEnds {
 public:
  StateMonitor(MetricsRegistry& metrics, HealthState& health, std::chrono::seconds interval)
      : metrics_(metrics), health_(health), interval_(interval) {}
  ~StateMonitor() override { stop(); }

  void start(std::shared_ptr<const Config> config);
  void set_config(std::shared_ptr<const Config> config);
  // Refreshes the ended job's table's gauges soon: what a job of its kind
  // changes in the state.
  void job_ended(const JobEnded& ended) override;
  // Stops and joins the thread; idempotent.
  void stop();

 private:
  void loop();
  // The tables' states (every table's when `everything`, else those not
  // read for kReadAllEvery), the schema's size, the other databases, the
  // pruning.
  void refresh(const Config& config, bool everything);
  // Only what the runs of `loads` and `reconciles` changed.
  void refresh_ran(const Config& config, const std::set<TableKey>& loads, const std::set<TableKey>& reconciles);
  // Reads the states of the configured tables (those in `only`, when
  // given; with `stale_only`, those not read for kReadAllEvery) and sets
  // their gauges. Throws on failure.
  void read_tables(const Config& config, const std::set<TableKey>* only, bool stale_only);
  PgConnection& state_session(const Config& config);
  // Records how far the loads in flight have copied (ProgressBook), at
  // most every kProgressEvery.
  void record_progress(const Config& config);
  // Prunes the run history when kPruneEvery has passed since the last
  // pass ended (kPruneAgain when it had to stop before the retention).
  void prune_history(PgConnection& state, std::chrono::seconds retention);

  static constexpr std::chrono::minutes kPruneEvery{10};
  static constexpr std::chrono::seconds kPruneFor{20};
  static constexpr std::chrono::minutes kPruneAgain{1};  // after a pass that did not finish
  static constexpr std::chrono::seconds kRanEvery{1};     // the least time between reads of tables that ran
  static constexpr std::chrono::seconds kReadAllEvery{60};  // every table's state is read at least this often
  static constexpr std::chrono::seconds kProgressEvery{2};

  MetricsRegistry& metrics_;
  HealthState& health_;
  std::chrono::seconds interval_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::shared_ptr<const Config> config_;
  bool reconfigured_ = false;
  // Tables that ran since their gauges were read.
  std::set<TableKey> loads_ran_;
  std::set<TableKey> reconciles_ran_;
  bool stopping_ = false;
  bool migrated_ = false;
  // The loop thread's:
  std::chrono::steady_clock::time_point next_prune_{};
  std::chrono::steady_clock::time_point next_progress_{};
  std::map<TableKey, std::int64_t> progress_recorded_;  // rows last recorded, of the loads in flight
  std::unique_ptr<PgConnection> state_;  // kept until it fails or a reload
  std::map<TableKey, std::chrono::steady_clock::time_point> read_at_;  // when each table's gauges were read
  std::thread thread_;
};

}  // namespace tidemark
