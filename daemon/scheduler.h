// Fires every table on its cron schedule. One boost::asio::system_timer
// per table lives on the event loop; a firing posts the run to a bounded
// worker pool and never runs it on the loop thread. A firing that finds
// every worker busy waits in a RunQueue (oldest first, one per table). A
// reload swaps the configuration; runs in flight finish with the
// configuration they started with. Every method must be called on the
// loop thread.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/system_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>

#include "core/cancel_token.h"
#include "core/config_model.h"
#include "core/run_queue.h"
#include "core/run_ports.h"
#include "daemon/connection_pool.h"
#include "daemon/metrics_registry.h"
#include "daemon/state_monitor.h"

namespace tidemark {

// When each table last started a run, from the state database.
using LastStarts = std::map<std::pair<std::string, std::string>, Instant>;

class Scheduler {
 public:
  // `workers` bounds the runs in flight (max_concurrent_runs at start-up).
  Scheduler(boost::asio::io_context& loop, MetricsRegistry& metrics, StateMonitor& monitor, std::size_t workers);
  ~Scheduler();

  // Arms every table's timer. A table whose firings were missed since its
  // last run (per `last_starts`) runs once now.
  void start(std::shared_ptr<const Config> config, const LastStarts& last_starts);

  // Applies a new, valid configuration: new tables get timers, removed ones
  // lose them, changed schedules re-arm. Nothing in flight is interrupted.
  void reload(std::shared_ptr<const Config> config);

  // Stops firing; waiting firings are dropped, never started. Runs in
  // flight may finish for `grace`; then they are cancelled. `done` is
  // posted to the loop once none is left.
  void stop(std::chrono::seconds grace, std::function<void()> done);

  std::size_t in_flight() const { return queue_.running(); }

 private:
  struct TableTimer {
    std::unique_ptr<boost::asio::system_timer> timer;
    std::string schedule;  // expression + zone it was armed for
    std::uint64_t generation = 0;
    int failures = 0;
    std::optional<Instant> next_regular;
  };
  using Key = std::pair<std::string, std::string>;

  void arm(const Key& key, Instant at, RunTrigger trigger);
  void arm_next_regular(const Key& key, Instant after);
  void fire(const Key& key, Instant scheduled, RunTrigger trigger);
  // Posts a firing the queue let start to the worker pool.
  void launch(const Firing& firing);
  void finished(const Key& key, RunStatus status);
  void maybe_done();

  boost::asio::io_context& loop_;
  MetricsRegistry& metrics_;
  StateMonitor& monitor_;
  ConnectionPool sessions_;  // before the workers: they give sessions back to it until they stop
  boost::asio::thread_pool pool_;
  std::shared_ptr<const Config> config_;
  std::map<Key, TableTimer> timers_;
  std::map<Key, std::shared_ptr<CancelToken>> running_;
  RunQueue queue_;
  bool stopping_ = false;
  std::function<void()> on_stopped_;
  std::unique_ptr<boost::asio::steady_timer> grace_timer_;
};

}  // namespace tidemark
