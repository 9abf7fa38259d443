// Keeps the watermark gauges true: every interval (and when asked after a
// run) it reads each table's watermark, when it moved and its last success
// from the state database, with that database's clock (StateReader), the
// state schema's size, and tries every database for tidemark_db_up; what
// it found of the state database is also /readyz's answer. It applies the
// state schema until that succeeds once, and prunes the run history every
// ten minutes. Owns one background thread; every public method is thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "core/config/config_model.h"
#include "daemon/serve/health_state.h"
#include "daemon/serve/metrics_registry.h"

namespace tidemark {

class PgConnection;

class StateMonitor {
 public:
  StateMonitor(MetricsRegistry& metrics, HealthState& health, std::chrono::seconds interval)
      : metrics_(metrics), health_(health), interval_(interval) {}
  ~StateMonitor() { stop(); }

  void start(std::shared_ptr<const Config> config);
  void set_config(std::shared_ptr<const Config> config);
  // Refresh soon (after a run finished).
  void poke();
  // Stops and joins the thread; idempotent.
  void stop();

 private:
  void loop();
  void refresh(const Config& config);
  // Prunes the run history when kPruneEvery has passed since the last
  // pass ended (kPruneAgain when it had to stop before the retention).
  void prune_history(PgConnection& state, std::chrono::seconds retention);

  static constexpr std::chrono::minutes kPruneEvery{10};
  static constexpr std::chrono::seconds kPruneFor{20};
  static constexpr std::chrono::minutes kPruneAgain{1};  // after a pass that did not finish

  MetricsRegistry& metrics_;
  HealthState& health_;
  std::chrono::seconds interval_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::shared_ptr<const Config> config_;
  bool poked_ = false;
  bool stopping_ = false;
  bool migrated_ = false;
  std::chrono::steady_clock::time_point next_prune_{};  // the loop thread's
  std::thread thread_;
};

}  // namespace tidemark
