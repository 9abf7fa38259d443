// Simulated time for the TableScheduler: a clock that moves only when a
// test moves it, an alarm that remembers when it was asked to ring, a
// launcher that holds runs until the test ends them, and a recorder of the
// scheduler's events. SimulatedScheduler drives them: advancing the clock
// rings the alarm at every instant it was set for, in order, never sleeping.
#pragma once

#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/run/run_observer.h"
#include "core/schedule/scheduler_ports.h"
#include "core/schedule/table_scheduler.h"

namespace tidemark {

// Wall and monotonic time move together, forward, unless a test steps
// the wall clock alone (step_wall).
class FakeClock final : public Clock {
 public:
  Instant now() const override { return now_; }
  std::chrono::steady_clock::duration monotonic() const override { return monotonic_; }
  void set(Instant now) {
    if (now > now_) monotonic_ += now - now_;
    now_ = now;
  }
  void step_wall(Instant now) { now_ = now; }

 private:
  Instant now_{};
  std::chrono::steady_clock::duration monotonic_{};
};

class FakeAlarm final : public Alarm {
 public:
  explicit FakeAlarm(const FakeClock& clock) : clock_(clock) {}
  std::optional<Instant> at;  // a wake_at: when it would ring; nothing when cancelled
  std::optional<std::chrono::steady_clock::duration> monotonic_at;  // a wake_after, on the monotonic clock
  void wake_at(Instant when) override {
    at = when;
    monotonic_at.reset();
  }
  void wake_after(std::chrono::steady_clock::duration delay) override {
    monotonic_at = clock_.monotonic() + delay;
    at.reset();
  }
  void cancel() override {
    at.reset();
    monotonic_at.reset();
  }
  // The wall instant it rings at, from where the clocks stand now.
  std::optional<Instant> rings_at() const {
    if (at) return at;
    if (!monotonic_at) return std::nullopt;
    return clock_.now() + std::chrono::ceil<std::chrono::seconds>(*monotonic_at - clock_.monotonic());
  }

 private:
  const FakeClock& clock_;
};

class FakeLauncher final : public RunLauncher {
 public:
  std::vector<RunOrder> launched;  // every run started, in order
  std::map<std::string, RunOrder> running;  // by table name ("name reconcile" for a reconcile)
  std::size_t most_running = 0;
  std::vector<std::size_t> batches;  // the size of every batch launched, in order
  int cancel_requests = 0;

  void launch(const RunOrder& order) override {
    launched.push_back(order);
    running[order.firing.table.table + (order.firing.kind == JobKind::Reconcile ? " reconcile" : "")] = order;
    most_running = std::max(most_running, running.size());
  }
  void launch_batch(const std::vector<RunOrder>& orders) override {
    batches.push_back(orders.size());
    for (const RunOrder& order : orders) launch(order);
  }
  void cancel_all() override { ++cancel_requests; }
};

class RecordedEvents final : public SchedulerEvents {
 public:
  std::vector<std::pair<std::string, Instant>> overruns;
  std::vector<std::size_t> queue_lengths;
  std::vector<std::string> caught_up;
  std::vector<std::pair<std::string, Instant>> retries;
  std::vector<std::pair<std::string, std::optional<Instant>>> not_retried_until;
  std::vector<std::string> reload_retries;
  std::optional<std::size_t> dropped_on_stop;
  std::optional<std::size_t> cancelled_at_grace;
  std::optional<std::size_t> left_behind;
  std::size_t owned = 0;  // after the last ownership change
  std::size_t gained = 0;
  std::size_t lost = 0;
  int lapses = 0;

  void overrun(const TableKey& t, Instant scheduled) override { overruns.emplace_back(t.table, scheduled); }
  void queue_length(std::size_t waiting) override { queue_lengths.push_back(waiting); }
  void catching_up(const TableKey& t, Instant) override { caught_up.push_back(t.table); }
  void retry_armed(const TableKey& t, Instant at, int) override { retries.emplace_back(t.table, at); }
  void not_retried(const TableKey& t, std::optional<Instant> next) override {
    not_retried_until.emplace_back(t.table, next);
  }
  void retry_after_reload(const TableKey& t) override { reload_retries.push_back(t.table); }
  void stopping(std::size_t dropped, std::size_t, std::chrono::seconds) override { dropped_on_stop = dropped; }
  void grace_over(std::size_t running) override { cancelled_at_grace = running; }
  void abandoned(std::size_t running) override { left_behind = running; }
  void ownership(std::size_t now_owned, std::size_t now_gained, std::size_t now_lost, std::size_t) override {
    owned = now_owned;
    gained = now_gained;
    lost = now_lost;
  }
  void lease_lapsed() override { ++lapses; }
};

struct SimulatedScheduler {
  FakeClock clock;
  FakeAlarm alarm{clock};
  FakeLauncher launcher;
  RecordedEvents events;
  TableScheduler scheduler;

  SimulatedScheduler(std::size_t workers, Instant start)
      : scheduler(workers, clock, alarm, launcher, events) {
    clock.set(start);
  }

  // Moves the clock to `until`, ringing the alarm at each instant it is
  // set for on the way (a wake that re-arms for the past would loop: fail).
  void advance_to(Instant until) {
    for (int rings = 0; alarm.rings_at() && *alarm.rings_at() <= until; ++rings) {
      REQUIRE(rings < 100000);
      clock.set(std::max(clock.now(), *alarm.rings_at()));
      alarm.cancel();
      scheduler.wake();
    }
    clock.set(std::max(clock.now(), until));
  }

  // The run of `table` ends now with `status` (and, failed, `kind`); "t
  // reconcile" names table t's reconcile.
  void finish(const std::string& table, RunStatus status, ErrorKind kind = ErrorKind::Transient) {
    const auto it = launcher.running.find(table);
    REQUIRE(it != launcher.running.end());
    RunSummary summary;
    summary.table = it->second.firing.table;
    summary.status = status;
    summary.error_kind = kind;
    if (status == RunStatus::Failed) summary.error = kind == ErrorKind::Permanent ? "schema" : "connection lost";
    const JobKind job = it->second.firing.kind;
    launcher.running.erase(it);
    scheduler.run_finished(summary.table, summary, job);
  }

  // A batch hands the run of `table` back: it waits for a worker of its own.
  void send_alone(const std::string& table) {
    const auto it = launcher.running.find(table);
    REQUIRE(it != launcher.running.end());
    const Firing firing = it->second.firing;
    launcher.running.erase(it);
    scheduler.run_alone(firing);
  }
};

}  // namespace tidemark
