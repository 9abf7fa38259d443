// The ports through which TableScheduler meets the world: the time now, an
// alarm that wakes it at an instant, a launcher that runs a table on a
// worker, and a sink for what it decided (metrics, logs). daemon/ implements
// them over Asio, the worker pool and spdlog; tests over a simulated clock.
// Every call to and from a port happens on the scheduler's own thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/config/config_model.h"
#include "core/schedule/run_queue.h"
#include "core/time/time_types.h"

namespace tidemark {

// The wall clock the schedules are read against.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual Instant now() const = 0;
  // Time since an arbitrary start that never jumps (a steady clock): what
  // durations such as the grace period at stop are measured on, so that a
  // wall clock stepped by NTP or an operator neither stretches nor cuts them.
  virtual std::chrono::steady_clock::duration monotonic() const = 0;
};

// Wakes the scheduler (TableScheduler::wake) once, at or after an instant.
// Only the latest request counts: wake_at() replaces the one before.
class Alarm {
 public:
  virtual ~Alarm() = default;
  virtual void wake_at(Instant at) = 0;
  // Wakes once after `delay` of monotonic time (Clock::monotonic); like
  // wake_at, it replaces the request before.
  virtual void wake_after(std::chrono::steady_clock::duration delay) = 0;
  // Nothing to wake for any more; a wake that races this is harmless.
  virtual void cancel() = 0;
};

// One run to start: the firing and the configuration it runs with. The
// shared configuration keeps `pipeline` and `table` alive for the whole
// run, whatever reloads happen meanwhile.
struct RunOrder {
  Firing firing;
  std::shared_ptr<const Config> config;
  const PipelineConfig* pipeline = nullptr;
  const TableConfig* table = nullptr;
};

// Runs tables somewhere else than the scheduler's thread (a bounded
// worker pool: the scheduler never launches more than it has workers).
class RunLauncher {
 public:
  virtual ~RunLauncher() = default;
  // Starts the run and returns at once. When the run ends, the launcher
  // calls TableScheduler::run_finished with its summary, on the
  // scheduler's thread, never from inside launch().
  virtual void launch(const RunOrder& order) = 0;
  // Starts the loads of one pipeline's incremental tables together on one
  // worker (TableScheduler::kBatchLimit at most): each ends through
  // run_finished, or through run_alone when it needs a run of its own.
  virtual void launch_batch(const std::vector<RunOrder>& orders) = 0;
  // Asks every run in flight to stop (between chunks or COPY rows); each
  // still reports through run_finished when it ends.
  virtual void cancel_all() = 0;
};

// What the scheduler decided, for metrics and the log. Every method has a
// default that ignores the event.
class SchedulerEvents {
 public:
  virtual ~SchedulerEvents() = default;
  // A firing found its table running or already waiting: skipped.
  virtual void overrun(const TableKey& /*table*/, Instant /*scheduled*/) {}
  // The number of firings waiting for a free worker changed.
  virtual void queue_length(std::size_t /*waiting*/) {}
  // Firings were missed while the daemon was down: one run now.
  virtual void catching_up(const TableKey& /*table*/, Instant /*last_started*/) {}
  // A transient failure: the table runs again at `at`.
  virtual void retry_armed(const TableKey& /*table*/, Instant /*at*/, int /*failures*/) {}
  // A permanent failure: no retry; the table waits for `next` (none: its
  // schedule never fires again) or a reload.
  virtual void not_retried(const TableKey& /*table*/, std::optional<Instant> /*next*/) {}
  // A reload gave a table that had failed permanently one new attempt.
  virtual void retry_after_reload(const TableKey& /*table*/) {}
  // Stopping: waiting firings dropped, runs in flight given `grace`.
  virtual void stopping(std::size_t /*dropped*/, std::size_t /*running*/, std::chrono::seconds /*grace*/) {}
  // The grace period is over; the runs still going are cancelled.
  virtual void grace_over(std::size_t /*running*/) {}
  // A new view of the fleet changed what this member owns: `owned` jobs
  // now, `gained` and `lost` by this change, among `members` live members.
  virtual void ownership(std::size_t /*owned*/, std::size_t /*gained*/, std::size_t /*lost*/,
                         std::size_t /*members*/) {}
  // This member's lease may have ended by its own clock before a renewal
  // came back: it fires nothing until one does.
  virtual void lease_lapsed() {}
  // Runs that did not end after cancellation are left behind.
  virtual void abandoned(std::size_t /*running*/) {}
};

}  // namespace tidemark
