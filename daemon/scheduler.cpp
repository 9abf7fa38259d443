#include "daemon/scheduler.h"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <spdlog/spdlog.h>

#include "core/firing_plan.h"
#include "core/instant_text.h"
#include "daemon/table_runner.h"

namespace tidemark {
namespace {

// How long an unused session to a database stays open: long enough to
// carry a table fired every minute from one run to the next.
constexpr std::chrono::seconds kIdleSessionTimeout{90};

Instant now_instant() { return date::floor<std::chrono::seconds>(std::chrono::system_clock::now()); }

// Finds a table of the configuration by key; nullptr pair when gone.
std::pair<const PipelineConfig*, const TableConfig*> lookup(const Config& config, const std::string& pipeline,
                                                            const std::string& table) {
  const PipelineConfig* p = config.find_pipeline(pipeline);
  return {p, p ? p->find_table(table) : nullptr};
}

std::string schedule_identity(const PipelineConfig& p, const TableConfig& t) {
  return t.schedule->expression() + " @ " + p.timezone;
}

}  // namespace

Scheduler::Scheduler(boost::asio::io_context& loop, MetricsRegistry& metrics, StateMonitor& monitor,
                     std::size_t workers)
    : loop_(loop),
      metrics_(metrics),
      monitor_(monitor),
      sessions_(workers, kIdleSessionTimeout),
      pool_(workers),
      queue_(workers) {}

Scheduler::~Scheduler() {
  for (auto& [key, running] : running_) running->cancel();
  pool_.join();
}

void Scheduler::start(std::shared_ptr<const Config> config, const LastStarts& last_starts) {
  config_ = std::move(config);
  const Instant now = now_instant();
  for (const PipelineConfig& p : config_->pipelines) {
    for (const TableConfig& t : p.tables) {
      const Key key{p.name, t.name};
      timers_[key].schedule = schedule_identity(p, t);
      const auto last = last_starts.find(key);
      if (last != last_starts.end() && missed_firing(p, t, last->second, now)) {
        spdlog::info("{}.{}: firings were missed since its last run at {}; running once now", p.name, t.name,
                     format_instant(last->second));
        arm(key, now, RunTrigger::Startup);
        timers_[key].next_regular = next_firing(p, t, now);
      } else {
        arm_next_regular(key, now);
      }
    }
  }
}

void Scheduler::reload(std::shared_ptr<const Config> config) {
  config_ = std::move(config);
  const Instant now = now_instant();
  std::map<Key, std::string> wanted;
  for (const PipelineConfig& p : config_->pipelines) {
    for (const TableConfig& t : p.tables) wanted[{p.name, t.name}] = schedule_identity(p, t);
  }
  for (auto it = timers_.begin(); it != timers_.end();) {
    if (!wanted.count(it->first)) {
      it->second.timer->cancel();
      if (queue_.remove(TableKey{it->first.first, it->first.second})) metrics_.set_queued(queue_.waiting());
      it = timers_.erase(it);
    } else {
      ++it;
    }
  }
  for (const auto& [key, identity] : wanted) {
    TableTimer& t = timers_[key];
    if (t.timer && t.schedule == identity) continue;  // unchanged: its timer stands
    t.schedule = identity;
    arm_next_regular(key, now);
  }
}

void Scheduler::arm_next_regular(const Key& key, Instant after) {
  const auto [p, t] = lookup(*config_, key.first, key.second);
  if (t == nullptr) return;
  const auto next = next_firing(*p, *t, after);
  timers_[key].next_regular = next;
  if (next) arm(key, *next, RunTrigger::Schedule);
}

void Scheduler::arm(const Key& key, Instant at, RunTrigger trigger) {
  TableTimer& t = timers_[key];
  if (!t.timer) t.timer = std::make_unique<boost::asio::system_timer>(loop_);
  const std::uint64_t generation = ++t.generation;
  t.timer->expires_at(std::chrono::system_clock::time_point(at.time_since_epoch()));
  t.timer->async_wait([this, key, at, trigger, generation](const boost::system::error_code& ec) {
    if (ec == boost::asio::error::operation_aborted) return;
    const auto it = timers_.find(key);
    // A later arm() or a reload moved this table's deadline.
    if (it == timers_.end() || it->second.generation != generation) return;
    fire(key, at, trigger);
  });
}

void Scheduler::fire(const Key& key, Instant scheduled, RunTrigger trigger) {
  if (stopping_) return;
  const auto [p, t] = lookup(*config_, key.first, key.second);
  if (t == nullptr) return;
  const TableKey table{key.first, key.second};
  arm_next_regular(key, std::max(scheduled, now_instant()));

  switch (queue_.offer(Firing{table, scheduled, trigger})) {
    case RunQueue::Offer::Start: launch(Firing{table, scheduled, trigger}); break;
    case RunQueue::Offer::Queued: metrics_.set_queued(queue_.waiting()); break;
    case RunQueue::Offer::Overrun:
      metrics_.run_skipped(table, SkipReason::Overrun);
      spdlog::warn("{}: skipped the firing of {}: the previous run is still going or already waiting",
                   table.display(), format_instant(scheduled));
      break;
  }
}

void Scheduler::launch(const Firing& firing) {
  const Key key{firing.table.pipeline, firing.table.table};
  const auto [p, t] = lookup(*config_, key.first, key.second);
  if (t == nullptr) std::abort();  // the queue holds only configured tables (reload removes the rest)
  auto cancel = std::make_shared<CancelToken>();
  running_[key] = cancel;
  // The run keeps the configuration it started with alive, whatever reloads happen.
  boost::asio::post(pool_, [this, config = config_, p = p, t = t, key, firing, cancel] {
    const auto started = std::chrono::system_clock::now();
    metrics_.run_started(firing.table,
                         started - std::chrono::system_clock::time_point(firing.scheduled.time_since_epoch()));
    TableRunner runner(config, metrics_, &sessions_);
    const TimedSummary result = runner.run(*p, *t, firing.trigger, *cancel);
    metrics_.run_ended(firing.table, result.duration);
    monitor_.poke();
    boost::asio::post(loop_, [this, key, status = result.summary.status] { finished(key, status); });
  });
}

void Scheduler::finished(const Key& key, RunStatus status) {
  running_.erase(key);
  if (const auto next = queue_.finished(TableKey{key.first, key.second})) {
    metrics_.set_queued(queue_.waiting());
    launch(*next);
  }
  const auto it = timers_.find(key);
  if (!stopping_ && it != timers_.end()) {
    TableTimer& t = it->second;
    if (status == RunStatus::Failed) {
      ++t.failures;
      const Instant retry = retry_at(now_instant(), t.failures, t.next_regular);
      if (!t.next_regular || retry < *t.next_regular) {
        spdlog::info("{}.{}: retrying at {} (failure {} in a row)", key.first, key.second, format_instant(retry),
                     t.failures);
        arm(key, retry, RunTrigger::Retry);
      }
    } else if (status == RunStatus::Success) {
      t.failures = 0;
    }
  }
  maybe_done();
}

void Scheduler::stop(std::chrono::seconds grace, std::function<void()> done) {
  stopping_ = true;
  on_stopped_ = std::move(done);
  for (auto& [key, t] : timers_) {
    if (t.timer) t.timer->cancel();
  }
  const std::size_t dropped = queue_.clear().size();
  metrics_.set_queued(0);
  if (dropped > 0) spdlog::info("stopping: {} waiting firing(s) will not start", dropped);
  if (queue_.running() > 0) {
    spdlog::info("stopping: waiting up to {}s for {} run(s) in flight", grace.count(), queue_.running());
    grace_timer_ = std::make_unique<boost::asio::steady_timer>(loop_, grace);
    grace_timer_->async_wait([this](const boost::system::error_code& ec) {
      if (ec == boost::asio::error::operation_aborted) return;
      spdlog::warn("stopping: the grace period is over; cancelling {} run(s)", queue_.running());
      for (auto& [key, cancel] : running_) cancel->cancel();
      // A run blocked inside the database may not notice; give up on it
      // after a while. Its transaction dies with the process, uncommitted.
      grace_timer_->expires_after(std::chrono::seconds(10));
      grace_timer_->async_wait([this](const boost::system::error_code& again) {
        if (again == boost::asio::error::operation_aborted || !on_stopped_) return;
        spdlog::error("stopping: {} run(s) did not end after cancellation; leaving them", queue_.running());
        boost::asio::post(loop_, std::move(on_stopped_));
        on_stopped_ = nullptr;
      });
    });
  }
  maybe_done();
}

void Scheduler::maybe_done() {
  if (!stopping_ || queue_.running() > 0 || !on_stopped_) return;
  if (grace_timer_) grace_timer_->cancel();
  boost::asio::post(loop_, std::move(on_stopped_));
  on_stopped_ = nullptr;
}

}  // namespace tidemark
