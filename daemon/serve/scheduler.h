// The daemon's scheduler: a TableScheduler (core/, which decides every
// firing, retry, catch-up, reload and stop) wired to the wall clock, one
// Asio timer on the event loop, the bounded worker pool that runs tables
// (never on the loop thread) and the chain each job's end goes through: the
// metrics, the log and the state monitor. Owned by `serve`;
// every method must be called on the loop thread (checked: LoopThread),
// which is the thread that makes it; the alarm's and the runs' ends come
// back to it on the loop.
#pragma once

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <functional>
#include <memory>

#include "core/config/config_model.h"
#include "core/schedule/job_end_chain.h"
#include "core/schedule/table_scheduler.h"
#include "daemon/serve/fleet_gate.h"
#include "daemon/serve/job_log.h"
#include "daemon/serve/loop_alarm.h"
#include "daemon/serve/loop_thread.h"
#include "daemon/serve/metrics_registry.h"
#include "daemon/serve/scheduler_reporter.h"
#include "daemon/serve/state_monitor.h"
#include "daemon/serve/wall_clock.h"
#include "daemon/serve/worker_launcher.h"

namespace tidemark {

class Scheduler {
 public:
  // `workers` bounds the runs in flight (max_concurrent_runs at start-up).
  Scheduler(boost::asio::io_context& loop, MetricsRegistry& metrics, StateMonitor& monitor, std::size_t workers);

  // Arms every table. A table whose firings were missed since its last
  // run (per `last_starts`) runs once now.
  void start(std::shared_ptr<const Config> config, const LastStarts& last_starts);
  // In a fleet: starts owning nothing, until the first assign().
  void start_in_fleet(std::shared_ptr<const Config> config);
  // A renewal of this member's lease came back (TableScheduler::assign).
  void assign(FleetView view, const std::optional<LastStarts>& last_starts);

  // A table moved: its dependents this member owns run now
  // (TableScheduler::input_moved).
  void input_moved(const TableKey& input);

  // The pauses were read (TableScheduler::set_pauses); the first read lets
  // the fleet's views through.
  void set_pauses(PauseSet pauses, const std::vector<CatchUpResume>& catch_ups);

  // Applies a new, valid configuration (TableScheduler::reload). Nothing
  // in flight is interrupted.
  void reload(std::shared_ptr<const Config> config);

  // Stops firing; waiting firings are dropped, never started. Runs in
  // flight may finish for `grace`; then they are cancelled. `done` is
  // posted to the loop once none is left (or they were left behind).
  void stop(std::chrono::seconds grace, std::function<void()> done);

  std::size_t in_flight() const;

 private:
  LoopThread loop_thread_;  // every entry into tables_ is checked against it
  boost::asio::io_context& loop_;
  WallClock clock_;
  SchedulerReporter reporter_;
  FleetGate gate_;  // before launcher_: its workers read it
  JobLog log_;
  JobEndChain ends_;  // likewise
  WorkerLauncher launcher_;  // destroyed after tables_: it joins the workers
  LoopAlarm alarm_;
  TableScheduler tables_;
};

}  // namespace tidemark
