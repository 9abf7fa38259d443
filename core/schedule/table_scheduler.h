// Decides when every table runs: arms its next firing, fires it into the
// RunQueue, skips overruns, retries transient failures with backoff (never
// a permanent one), runs once at start-up what downtime missed, applies
// reloads and stops. A table with deletes: has a second job, its
// reconcile, on its own schedule, decided the same way (keyed by table and
// JobKind). In a fleet it fires only the jobs its FleetView owns at the
// moment of firing, and a job it gains runs once at once when its old
// owner missed a firing; a reconcile that finds the table's lock held by a load is
// tried again after the backoff, like a transient failure, and one missed
// while the daemon was down runs once at start-up, like a load. It reads
// time only from its Clock, waits only through
// its Alarm and runs tables only through its RunLauncher. A paused table
// (PauseSet) fires nothing: no schedule, retry, catch-up or input wake. Not thread-safe:
// owned by one thread (the daemon's loop), which makes every call.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/config/config_model.h"
#include "core/fleet/fleet_view.h"
#include "core/run/run_observer.h"
#include "core/schedule/catch_up.h"
#include "core/schedule/pause_set.h"
#include "core/schedule/run_queue.h"
#include "core/schedule/scheduler_ports.h"
#include "core/time/time_types.h"

namespace tidemark {

class TableScheduler {
 public:
  // How long runs still get after they were cancelled at the end of the
  // grace period before stop() gives up on them.
  static constexpr std::chrono::seconds kAbandonAfter{10};

  // `workers` >= 1 bounds the runs in flight. The ports must outlive the
  // scheduler.
  TableScheduler(std::size_t workers, Clock& clock, Alarm& alarm, RunLauncher& launcher, SchedulerEvents& events);

  // Arms every job of `config`. A job (a table's load or reconcile) whose
  // schedule fired since its last start in `last_starts` runs once now
  // (trigger startup); one that never ran waits for its first firing.
  // Call once, before anything else. `view` says which jobs this process
  // owns until the first assign(); sole() owns them all.
  // With `pauses_known` false (a daemon, before the state database was
  // read) the views assign() gets wait for the first set_pauses(): a
  // paused table must not catch up the moment a member starts.
  void start(std::shared_ptr<const Config> config, const LastStarts& last_starts,
             FleetView view = FleetView::sole(), bool pauses_known = true);

  // Acts on a new view of the fleet. A job this member owns now and did
  // not a moment ago runs once at once (trigger startup for the first
  // view, takeover after) when a firing was missed: by `last_starts`, read
  // for this change, when they name the job; else when this member skipped
  // one itself while its lease had lapsed (no other member could run it
  // then), or while it was joining and `last_starts` show the job never
  // ran (other members may have run it then: only the run rows can tell).
  // A job it no longer owns loses its waiting firing; a run of it in
  // flight goes on, under its advisory lock.
  void assign(FleetView view, const std::optional<LastStarts>& last_starts);

  // Applies a new, valid configuration: new tables are armed, removed ones
  // disarmed and their waiting firing dropped, changed schedules re-armed
  // (a pending retry stays when it comes first). A table whose last run
  // failed permanently gets one attempt now: a reload is how an operator
  // says the cause was fixed. Runs in flight keep the configuration they
  // started with; a firing still waiting runs with the new one.
  void reload(std::shared_ptr<const Config> config);

  // Stops firing: nothing is armed any more and waiting firings are
  // dropped. Runs in flight get `grace`; then the launcher cancels them,
  // and kAbandonAfter later they are left behind. `done` is called (from
  // within stop, run_finished or wake) once no run is in flight or they
  // were left behind. Calls after the first are ignored.
  void stop(std::chrono::seconds grace, std::function<void()> done);

  // The Alarm rang: fires every firing that is due by the clock (oldest
  // first) and asks to be woken for the next one. A wake with nothing due
  // (early, or raced by a reload) only re-arms.
  void wake();

  // A run the launcher started has ended: its worker goes to the oldest
  // waiting firing, and a failed run is retried or not, by its error kind.
  // Requires a run of `table` in flight (aborts otherwise: the launcher
  // reported a run it never got).
  void run_finished(const TableKey& table, const RunSummary& summary, JobKind kind = JobKind::Load);
  // `input` moved (a run of it committed, on this member or another): the
  // loads of the tables that name it among their inputs and that this
  // member owns fire now (trigger input), each at most once; one already
  // waiting for a worker stays as it is, and one running fires once more
  // when it ends, since it may have read the input's old watermark. One
  // this member is about to gain (its view picks it once settled: a
  // handover under way, which no member fires meanwhile) fires once it is
  // gained. Their schedules fire as before.
  void input_moved(const TableKey& input);

  // The pauses changed (read from the state database, on any member's
  // command): a job now paused loses its waiting firing (a run in flight
  // finishes) and lets every firing pass until it is resumed. A resumed
  // job fires at its next firing; one a `catch_ups` resume covers, that
  // this member owns and whose schedule fired since that pause began,
  // runs once now (trigger resume).
  void set_pauses(PauseSet pauses, const std::vector<CatchUpResume>& catch_ups);

  // A batch could not finish the run of `firing` (it found rows to load,
  // or anything else a run of its own decides): it waits again, in its
  // place, for a worker of its own. Requires it in flight.
  void run_alone(const Firing& firing);

  // The most firings one worker takes on together (RunLauncher::launch_batch).
  static constexpr std::size_t kBatchLimit = 100;

  std::size_t in_flight() const { return queue_.running(); }
  std::size_t waiting() const { return queue_.waiting(); }

 private:
  struct Deadline {
    Instant at;
    RunTrigger trigger = RunTrigger::Schedule;
  };
  struct TableState {
    const PipelineConfig* pipeline = nullptr;  // into config_
    const TableConfig* table = nullptr;
    std::string schedule;  // expression and zone it is armed for
    std::optional<Instant> next_regular;
    std::optional<Deadline> armed;  // the one firing this table waits for
    int failures = 0;               // in a row, for the backoff
    bool failed_permanently = false;
    // Why this member let a firing pass unrun (catch_up.h), until an owner
    // that can run it is settled.
    SkippedFiring skipped = SkippedFiring::None;
    // Added by a reload since the last view: `last_starts` read for the
    // next view may not have asked about it, so their silence says nothing.
    bool added_since_view = false;
  };
  enum class StopPhase { Running, Grace, Cancelled, Done };

  // The jobs `config` asks for, with their pipeline and table.
  std::map<JobKey, std::pair<const PipelineConfig*, const TableConfig*>> jobs_of(const Config& config) const;
  void arm(const JobKey& key, Instant at, RunTrigger trigger);
  void disarm(const JobKey& key);
  void arm_next_regular(const JobKey& key, Instant after);
  void fire(const JobKey& key, const Deadline& due, Instant now);
  // Offers `firing` to the queue: starts it, or it waits for a worker, or
  // (an overrun) it is coalesced with the run going or waiting.
  RunQueue::Offer offer(const Firing& firing);
  // Starts `next` and, when this member no longer owns it, frees its
  // worker for the next waiting firing instead.
  void launch_next(std::optional<Firing> next);
  // Starts `firing`, with the waiting firings a batch can take along.
  void launch(const Firing& firing);
  // Whether a batch may take the firing: a load of a table whose mode
  // batches, without a lookback, that was not sent back by one.
  bool batchable(const Firing& firing) const;
  // Whether this member fires the job now; notes a firing it skipped while
  // its lease had lapsed or no view decided whose the firing was.
  bool owned_at_firing(const JobKey& key);
  // Whether this member fires the job now: it owns it and it is not paused.
  bool fires_at(const JobKey& key);
  void set_alarm();
  void wake_while_stopping();
  void maybe_done();

  Clock& clock_;
  Alarm& alarm_;
  RunLauncher& launcher_;
  SchedulerEvents& events_;
  std::shared_ptr<const Config> config_;
  std::map<JobKey, TableState> tables_;
  std::set<std::pair<Instant, JobKey>> deadlines_;  // every armed firing, earliest first
  std::optional<Instant> alarm_at_;
  RunQueue queue_;
  FleetView view_ = FleetView::sole();
  PauseSet pauses_;
  bool pauses_known_ = true;
  // A view that came before the pauses were known, and the latest last
  // starts read with one (a later view may not read them again).
  std::optional<FleetView> held_view_;
  std::optional<LastStarts> held_last_starts_;
  bool first_view_ = true;       // the next assign() is the first: its catch-ups are the start-up's
  bool lapse_reported_ = false;  // since the last assign()
  StopPhase phase_ = StopPhase::Running;
  std::chrono::steady_clock::duration stop_deadline_{};  // on Clock::monotonic
  // What fired the run going or waiting of each job: a run an input woke
  // is no overrun of the schedule, nor is its lock held elsewhere the end
  // of its wake.
  std::map<JobKey, RunTrigger> going_;
  // Fire once more when their run ends: an input moved while it went
  // (input), or the schedule fired while an input's wake went (schedule:
  // its lookback is the schedule's).
  std::map<JobKey, RunTrigger> again_after_run_;
  std::set<JobKey> woken_before_gained_;  // fire once this member owns them
  std::function<void()> on_stopped_;
};

}  // namespace tidemark
