#include "core/schedule/table_scheduler.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "core/config/table_modes.h"
#include "core/schedule/firing_plan.h"
#include "core/schedule/job_kinds.h"

namespace tidemark {
namespace {

std::string schedule_identity(const PipelineConfig& p, const TableConfig& t, JobKind kind) {
  return job_schedule(t, kind).expression() + " @ " + p.timezone;
}


}  // namespace

TableScheduler::TableScheduler(std::size_t workers, Clock& clock, Alarm& alarm, RunLauncher& launcher,
                               SchedulerEvents& events)
    : clock_(clock), alarm_(alarm), launcher_(launcher), events_(events), queue_(workers) {}

void TableScheduler::start(std::shared_ptr<const Config> config, const LastStarts& last_starts, FleetView view,
                           bool pauses_known) {
  config_ = std::move(config);
  pauses_known_ = pauses_known;
  view_ = std::move(view);
  const Instant now = clock_.now();
  for (const auto& [key, job] : jobs_of(*config_)) {
    const auto [p, t] = job;
    TableState& state = tables_[key];
    state.pipeline = p;
    state.table = t;
    state.schedule = schedule_identity(*p, *t, key.kind);
    // A load and a reconcile each catch up on their own schedule.
    const auto last = last_starts.find(key);
    if (last != last_starts.end() && missed_firing(*p, *t, last->second, now, key.kind)) {
      events_.catching_up(key.table, last->second);
      state.next_regular = next_firing(*p, *t, now, key.kind);
      arm(key, now, RunTrigger::Startup);
    } else {
      arm_next_regular(key, now);
    }
  }
  set_alarm();
}

void TableScheduler::reload(std::shared_ptr<const Config> config) {
  if (phase_ != StopPhase::Running) return;  // nothing fires any more; the old configuration serves the runs left
  config_ = std::move(config);
  const Instant now = clock_.now();
  const auto wanted = jobs_of(*config_);
  for (auto it = tables_.begin(); it != tables_.end();) {
    if (wanted.count(it->first)) {
      ++it;
      continue;
    }
    disarm(it->first);
    if (queue_.remove(it->first.table, it->first.kind)) {
      going_.erase(it->first);
      events_.queue_length(queue_.waiting());
    }
    woken_before_gained_.erase(it->first);
    again_after_run_.erase(it->first);
    it = tables_.erase(it);
  }
  for (const auto& [key, found] : wanted) {
    const auto [p, t] = found;
    const bool added = tables_.count(key) == 0;
    TableState& state = tables_[key];
    if (added) state.added_since_view = true;
    state.pipeline = p;
    state.table = t;
    const std::string identity = schedule_identity(*p, *t, key.kind);
    if (added || state.schedule != identity) {
      state.schedule = identity;
      const std::optional<Deadline> pending = state.armed;
      arm_next_regular(key, now);
      // A retry or catch-up that comes before the new schedule's first
      // firing still stands: the reason for it did not go away.
      if (pending && pending->trigger != RunTrigger::Schedule &&
          (!state.next_regular || pending->at < *state.next_regular)) {
        arm(key, pending->at, pending->trigger);
      }
    }
    if (state.failed_permanently) {
      state.failed_permanently = false;
      state.failures = 0;
      events_.retry_after_reload(key.table);
      arm(key, now, RunTrigger::Retry);
    }
  }
  set_alarm();
}

void TableScheduler::assign(FleetView view, const std::optional<LastStarts>& last_starts) {
  if (phase_ != StopPhase::Running) return;  // nothing fires any more
  if (!pauses_known_) {
    held_view_ = std::move(view);
    if (last_starts) held_last_starts_ = last_starts;
    return;
  }
  const auto mono = clock_.monotonic();
  if (!view_.lapsed(mono) && view_.same_fleet(view)) {
    view_ = std::move(view);  // the lease renewed: same tables, later end
    return;
  }
  const Instant now = clock_.now();
  const RunTrigger catch_up = first_view_ ? RunTrigger::Startup : RunTrigger::Takeover;
  std::size_t owned = 0;
  std::size_t gained = 0;
  std::size_t lost = 0;
  for (auto& [key, state] : tables_) {
    const bool had = view_.owns(key.table, mono);
    const bool has = view.owns(key.table, mono);
    owned += has ? 1 : 0;
    if (had && !has) {
      ++lost;
      if (queue_.remove(key.table, key.kind)) {
        going_.erase(key);
        again_after_run_.erase(key);
        events_.queue_length(queue_.waiting());
      }
    } else if (!had && has) {
      ++gained;
      TableHistory history;
      if (last_starts) {
        const auto last = last_starts->find(key);
        if (last != last_starts->end()) {
          history = {TableHistory::Answer::Ran, last->second};
        } else {
          history.answer = state.added_since_view ? TableHistory::Answer::NotAsked : TableHistory::Answer::NeverRan;
        }
      }
      if (catch_up_on_gain(state.skipped, history, *state.pipeline, *state.table, key.kind, now)) {
        if (history.last_started) events_.catching_up(key.table, *history.last_started);
        arm(key, now, catch_up);
      } else if (woken_before_gained_.count(key)) {
        arm(key, now, RunTrigger::Input);  // an input moved while the table was changing hands
      }
    }
    if (has || !view.picks_once_settled(key.table)) woken_before_gained_.erase(key);
    // Kept through views that decide nothing (none, or not settled yet)
    // until this member owns the table again or another member does.
    if (has || (view.settled() && !view.picks(key.table))) state.skipped = SkippedFiring::None;
    state.added_since_view = false;
  }
  view_ = std::move(view);
  if (view_.settled()) first_view_ = false;
  lapse_reported_ = false;
  events_.ownership(owned, gained, lost, view_.members().size());
  set_alarm();
}

void TableScheduler::stop(std::chrono::seconds grace, std::function<void()> done) {
  if (phase_ != StopPhase::Running) return;
  phase_ = StopPhase::Grace;
  on_stopped_ = std::move(done);
  deadlines_.clear();
  for (auto& [key, state] : tables_) state.armed.reset();
  const std::vector<Firing> dropped_firings = queue_.clear();
  for (const Firing& f : dropped_firings) going_.erase(JobKey{f.table, f.kind});
  const std::size_t dropped = dropped_firings.size();
  events_.queue_length(0);
  events_.stopping(dropped, queue_.running(), grace);
  stop_deadline_ = clock_.monotonic() + grace;
  alarm_at_.reset();
  if (queue_.running() > 0) {
    alarm_.wake_after(grace);
  } else {
    alarm_.cancel();
  }
  maybe_done();
}

void TableScheduler::wake() {
  if (phase_ != StopPhase::Running) {
    wake_while_stopping();
    return;
  }
  alarm_at_.reset();  // it rang
  const Instant now = clock_.now();
  while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
    const JobKey key = deadlines_.begin()->second;
    TableState& state = tables_.at(key);
    const Deadline due = *state.armed;
    disarm(key);
    fire(key, due, now);
  }
  set_alarm();
}

void TableScheduler::wake_while_stopping() {
  const auto now = clock_.monotonic();
  if (phase_ == StopPhase::Done) return;
  if (now < stop_deadline_) {
    alarm_.wake_after(stop_deadline_ - now);  // woken early: the deadline stands
    return;
  }
  if (phase_ == StopPhase::Grace) {
    events_.grace_over(queue_.running());
    phase_ = StopPhase::Cancelled;
    stop_deadline_ = now + kAbandonAfter;
    launcher_.cancel_all();
    alarm_.wake_after(kAbandonAfter);
    return;
  }
  // A run blocked inside the database may never notice its cancellation;
  // its transaction dies with the process, uncommitted.
  events_.abandoned(queue_.running());
  phase_ = StopPhase::Done;
  if (on_stopped_) {
    auto done = std::move(on_stopped_);
    on_stopped_ = nullptr;
    done();
  }
}

void TableScheduler::run_finished(const TableKey& table, const RunSummary& summary, JobKind kind) {
  const JobKey key{table, kind};
  const auto went = going_.find(key);
  const bool woken_run = went != going_.end() && went->second == RunTrigger::Input;
  if (went != going_.end()) going_.erase(went);
  launch_next(queue_.finished(table, kind));
  const auto again = again_after_run_.find(key);
  std::optional<RunTrigger> fire_again;
  if (again != again_after_run_.end()) {
    fire_again = again->second;
    again_after_run_.erase(again);
  }
  if (phase_ != StopPhase::Running) {
    maybe_done();
    return;
  }
  const auto it = tables_.find(key);
  if (it == tables_.end()) return;  // a reload removed the table while it ran
  // An input moved while it ran, or the schedule fired: once more.
  if (fire_again && view_.owns(table, clock_.monotonic()) && !pauses_.paused(table)) {
    offer(Firing{table, clock_.now(), *fire_again, kind});
  }
  TableState& state = it->second;
  RunStatus status = summary.status;
  // A job that comes back after the backoff when the lock is held (the
  // job-kind table says which) does; so does an input's wake that found
  // the lock held (by the table's reconcile, or its former owner's run):
  // else it is lost until the schedule fires.
  if ((job_kind(kind).held_lock == HeldLock::RetryAfterBackoff || woken_run) && status == RunStatus::SkippedLocked &&
      view_.owns(table, clock_.monotonic())) {
    status = RunStatus::Failed;
  }
  switch (status) {
    case RunStatus::Success:
      state.failures = 0;
      state.failed_permanently = false;
      break;
    case RunStatus::Failed:
      if (summary.status == RunStatus::Failed && summary.error_kind == ErrorKind::Permanent) {
        // The backoff counts transient failures in a row; this one is of
        // another kind and starts that count over.
        state.failures = 0;
        state.failed_permanently = true;
        events_.not_retried(table, state.next_regular);
        break;
      }
      ++state.failures;
      state.failed_permanently = false;
      if (const Instant retry = retry_at(clock_.now(), state.failures, state.next_regular);
          !state.next_regular || retry < *state.next_regular) {
        events_.retry_armed(table, retry, state.failures);
        arm(key, retry, RunTrigger::Retry);
      }
      break;
    case RunStatus::SkippedLocked:  // another replica runs the table: its run decides
    case RunStatus::Cancelled: break;
  }
  set_alarm();
}

std::map<JobKey, std::pair<const PipelineConfig*, const TableConfig*>> TableScheduler::jobs_of(
    const Config& config) const {
  std::map<JobKey, std::pair<const PipelineConfig*, const TableConfig*>> out;
  for (const PipelineConfig& p : config.pipelines) {
    for (const TableConfig& t : p.tables) {
      for (const JobKindSpec& kind : job_kinds()) {
        if (kind.has(t)) out[{p.name, t.name, kind.kind}] = {&p, &t};
      }
    }
  }
  return out;
}

void TableScheduler::arm(const JobKey& key, Instant at, RunTrigger trigger) {
  disarm(key);
  tables_.at(key).armed = Deadline{at, trigger};
  deadlines_.emplace(at, key);
}

void TableScheduler::disarm(const JobKey& key) {
  TableState& state = tables_.at(key);
  if (!state.armed) return;
  deadlines_.erase({state.armed->at, key});
  state.armed.reset();
}

void TableScheduler::arm_next_regular(const JobKey& key, Instant after) {
  TableState& state = tables_.at(key);
  state.next_regular = next_firing(*state.pipeline, *state.table, after, key.kind);
  if (state.next_regular) {
    arm(key, *state.next_regular, RunTrigger::Schedule);
  } else {
    disarm(key);
  }
}

void TableScheduler::fire(const JobKey& key, const Deadline& due, Instant now) {
  // From the later of the two, so a clock that jumped or a loop that
  // stalled yields one firing now, not a burst of the ones in between.
  arm_next_regular(key, std::max(due.at, now));
  if (!fires_at(key)) return;  // another member's, none's while this lease is in doubt, or paused
  const Firing firing{key.table, due.at, due.trigger, key.kind};
  if (offer(firing) != RunQueue::Offer::Overrun) return;
  const auto went = going_.find(key);
  if (went != going_.end() && went->second == RunTrigger::Input) {
    // An input's wake is going, not a slow run: the schedule's firing
    // runs after it.
    again_after_run_[key] = due.trigger;
    return;
  }
  events_.overrun(firing.table, firing.scheduled);
}

RunQueue::Offer TableScheduler::offer(const Firing& firing) {
  const RunQueue::Offer offered = queue_.offer(firing);
  if (offered != RunQueue::Offer::Overrun) going_[JobKey{firing.table, firing.kind}] = firing.trigger;
  switch (offered) {
    case RunQueue::Offer::Start:
      tables_.at(JobKey{firing.table, firing.kind}).failed_permanently = false;  // a new attempt decides
      launch(firing);
      break;
    case RunQueue::Offer::Queued:
      tables_.at(JobKey{firing.table, firing.kind}).failed_permanently = false;
      events_.queue_length(queue_.waiting());
      break;
    case RunQueue::Offer::Overrun: break;
  }
  return offered;
}

void TableScheduler::input_moved(const TableKey& input) {
  if (phase_ != StopPhase::Running) return;
  const auto moved = tables_.find(JobKey{input, JobKind::Load});
  if (moved == tables_.end()) return;  // not configured here (a member with another configuration)
  const auto mono = clock_.monotonic();
  for (const TableRef& dependent : moved->second.table->dependents) {
    const JobKey key{TableKey{dependent.pipeline, dependent.table}, JobKind::Load};
    const auto state = tables_.find(key);
    if (state == tables_.end()) continue;
    if (!view_.owns(key.table, mono)) {
      if (view_.picks_once_settled(key.table)) woken_before_gained_.insert(key);
      continue;
    }
    // A table failing waits for its retry, or (permanently) for a person,
    // and a paused one for its resume: an input moving ends none of them.
    if (state->second.failed_permanently || state->second.failures > 0 || pauses_.paused(key.table)) continue;
    if (queue_.is_running(key.table, key.kind)) {
      again_after_run_.emplace(key, RunTrigger::Input);  // a schedule's firing waiting there stays it
      continue;
    }
    offer(Firing{key.table, clock_.now(), RunTrigger::Input, key.kind});  // coalesced when already waiting
  }
}

bool TableScheduler::owned_at_firing(const JobKey& key) {
  const auto mono = clock_.monotonic();
  if (view_.owns(key.table, mono)) return true;
  TableState& state = tables_.at(key);
  if (view_.lapsed(mono) && view_.picks(key.table)) {
    state.skipped = SkippedFiring::LeaseLapsed;
    if (!lapse_reported_) events_.lease_lapsed();
    lapse_reported_ = true;
  } else if (!view_.settled()) {
    state.skipped = std::max(state.skipped, SkippedFiring::Undecided);
  }
  return false;
}

bool TableScheduler::fires_at(const JobKey& key) {
  if (!owned_at_firing(key)) return false;
  return !pauses_.paused(key.table);
}

void TableScheduler::set_pauses(PauseSet pauses, const std::vector<CatchUpResume>& catch_ups) {
  if (phase_ == StopPhase::Running) {
    const Instant now = clock_.now();
    const auto mono = clock_.monotonic();
    for (auto& [key, state] : tables_) {
      if (pauses.paused(key.table)) {
        // What an input asked of a run in flight is dropped with it.
        again_after_run_.erase(key);
        if (!pauses_.paused(key.table) && queue_.remove(key.table, key.kind)) {
          going_.erase(key);
          events_.queue_length(queue_.waiting());
        }
        continue;
      }
      for (const CatchUpResume& resume : catch_ups) {
        if (!resume.covers(key.table) || !view_.owns(key.table, mono)) continue;
        const Instant since{std::chrono::seconds(static_cast<std::int64_t>(resume.paused_since))};
        if (missed_firing(*state.pipeline, *state.table, since, now, key.kind)) {
          arm(key, now, RunTrigger::Resume);
          break;
        }
      }
    }
  }
  pauses_ = std::move(pauses);
  if (!pauses_known_) {
    pauses_known_ = true;
    if (held_view_) {
      FleetView view = std::move(*held_view_);
      std::optional<LastStarts> last_starts = std::move(held_last_starts_);
      held_view_.reset();
      held_last_starts_.reset();
      assign(std::move(view), last_starts);
      return;
    }
  }
  set_alarm();
}

void TableScheduler::launch_next(std::optional<Firing> next) {
  for (; next; next = queue_.finished(next->table, next->kind)) {
    events_.queue_length(queue_.waiting());
    // It waited for a worker while the fleet changed, the lease lapsed or
    // a pause came.
    if (fires_at({next->table, next->kind})) {
      launch(*next);
      return;
    }
  }
}

void TableScheduler::launch(const Firing& firing) {
  const JobKey key{firing.table, firing.kind};
  const TableState& state = tables_.at(key);
  const RunOrder first{firing, config_, state.pipeline, state.table};
  if (!batchable(firing)) {
    launcher_.launch(first);
    return;
  }
  // Firings that wait while this one starts would each take a worker of
  // their own; those of the same pipeline share this one, where a batch
  // asks the source about all of them at once.
  std::vector<RunOrder> batch{first};
  const auto along = [&](const Firing& f) { return f.table.pipeline == firing.table.pipeline && batchable(f); };
  for (const Firing& taken : queue_.take_along(key, along, kBatchLimit - 1)) {
    const JobKey taken_key{taken.table, taken.kind};
    if (!fires_at(taken_key)) {
      queue_.finished(taken.table, taken.kind);  // the worker stays busy with the rest
      continue;
    }
    const TableState& s = tables_.at(taken_key);
    batch.push_back(RunOrder{taken, config_, s.pipeline, s.table});
  }
  if (batch.size() == 1) {
    launcher_.launch(first);
    return;
  }
  events_.queue_length(queue_.waiting());
  launcher_.launch_batch(batch);
}

bool TableScheduler::batchable(const Firing& firing) const {
  if (!job_kind(firing.kind).batches || firing.alone) return false;
  const auto it = tables_.find(JobKey{firing.table, firing.kind});
  // With a lookback a window always reaches back over rows loaded before:
  // its table would be handed back nearly every time.
  return it != tables_.end() && table_mode(it->second.table->mode).batches && it->second.table->lookback.is_zero();
}

void TableScheduler::run_alone(const Firing& firing) {
  const JobKey key{firing.table, firing.kind};
  if (phase_ != StopPhase::Running || tables_.count(key) == 0 || pauses_.paused(key.table)) {
    // Stopping, a reload removed the table, or it was paused while its
    // batch ran: nothing more of it runs.
    going_.erase(key);
    launch_next(queue_.finished(firing.table, firing.kind));
    if (phase_ != StopPhase::Running) maybe_done();
    return;
  }
  launch_next(queue_.wait_again(firing));
  events_.queue_length(queue_.waiting());
}

void TableScheduler::set_alarm() {
  if (phase_ != StopPhase::Running) return;
  if (deadlines_.empty()) {
    if (alarm_at_) alarm_.cancel();
    alarm_at_.reset();
    return;
  }
  const Instant earliest = deadlines_.begin()->first;
  if (alarm_at_ == earliest) return;
  alarm_at_ = earliest;
  alarm_.wake_at(earliest);
}

void TableScheduler::maybe_done() {
  if (phase_ == StopPhase::Running || phase_ == StopPhase::Done || queue_.running() > 0) return;
  phase_ = StopPhase::Done;
  alarm_.cancel();
  if (on_stopped_) {
    auto done = std::move(on_stopped_);
    on_stopped_ = nullptr;
    done();
  }
}

}  // namespace tidemark
