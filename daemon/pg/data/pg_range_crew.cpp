#include "daemon/pg/data/pg_range_crew.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "daemon/pg/data/pg_run_ports.h"
#include "daemon/pg/data/pipeline_connections.h"
#include "daemon/pg/data/table_snapshot.h"
#include "daemon/pg/libpq/pg_error.h"

namespace tidemark {

// The jobs of one run(), handed out in order to whoever asks until one
// fails or the run is cancelled, and what they did, one at a time.
struct JobBoard {
  JobBoard(std::size_t jobs, const RangeCrew::Job& each, const RangeCrew::Done& heard, const CancelToken& token)
      : count(jobs), job(each), done(heard), cancel(token) {}

  const std::size_t count;
  const RangeCrew::Job& job;
  const RangeCrew::Done& done;
  const CancelToken& cancel;
  std::mutex mutex;
  std::size_t next = 0;
  std::optional<Error> failed;

  // Works through the jobs with `target` while `go_on` says so. A job
  // taken and not done is a failure, whatever ended it: the load must not
  // finish over a range nobody committed.
  // Returns how many it committed.
  template <typename GoOn>
  int work(Target& target, GoOn go_on) {
    int committed = 0;
    while (go_on()) {
      std::size_t index = 0;
      {
        const std::lock_guard<std::mutex> lock(mutex);
        if (failed || cancel.cancelled() || next >= count) break;
        index = next++;
      }
      Result<ChunkCounts> counts = Error{"a range was not committed"};
      try {
        counts = job(target, index);
      } catch (const std::exception& e) {
        counts = Error{e.what()};
      }
      const std::lock_guard<std::mutex> lock(mutex);
      try {
        if (!counts) {
          if (!failed) failed = counts.failure();
        } else {
          done(index, *counts);
          ++committed;
        }
      } catch (const std::exception& e) {
        if (!failed) failed = Error{e.what()};
      }
    }
    return committed;
  }

  bool jobs_left() {
    const std::lock_guard<std::mutex> lock(mutex);
    return !failed && !cancel.cancelled() && next < count;
  }

  // What the jobs came to once every worker stopped.
  Status outcome() const {
    if (failed) return *failed;
    if (next < count) return Error{cancel.reason()};  // only a cancel leaves jobs untaken
    return ok_status();
  }
};

bool PgRangeCrew::help(const TableConfig& table, const RunLock& lock, int holder, const std::string& snapshot,
                       int number, JobBoard& board) {
  PipelineConnections sessions(from_.pool, from_.shared);
  sessions.open_state(config_);
  sessions.open_data(config_, pipeline_, /*with_primary=*/false);
  PgRunPorts ports(sessions, cancel_);
  ports.state.help(lock, holder);
  ports.target.help();
  // The target as the run's first range left it.
  if (const auto checked = ports.target.check(table); !checked) throw std::runtime_error(checked.failure().message);
  PgConnection& source = *sessions.source;
  join_snapshot(source, snapshot);
  // The locks its ranges' reads take, the table's and its indexes' (a
  // plan opens them all), at once or never: a rewrite, TRUNCATE or
  // REINDEX waiting behind the run's transaction would queue them behind
  // itself, and the run, which waits for its helpers before that
  // transaction ends, would never let it through. The run reads the
  // ranges instead. A lock its reads still wait for later (a TOAST
  // index's) fails its range after a minute rather than never.
  try {
    const std::string name = table.source_table->quoted();
    source.exec("SET LOCAL lock_timeout = '1s'; LOCK TABLE " + name + " IN ACCESS SHARE MODE; EXPLAIN SELECT FROM " +
                name + " WHERE ctid < '(0,1)'::tid; SET LOCAL lock_timeout = '60s'");
  } catch (const PgError& e) {
    if (e.sqlstate() != "55P03") throw;
    throw std::runtime_error("another session waits for a lock on the table or its indexes; the run reads the "
                             "ranges without this helper");
  }
  // Its copies count with the run's; not after the session goes back.
  struct Metered {
    PgConnection& session;
    ~Metered() { session.attach_meter(nullptr); }
  } metered{source};
  if (from_.meter != nullptr) source.attach_meter(from_.meter);
  bool yielded = false;
  const int committed = board.work(ports.target, [&] {
    yielded = from_.places != nullptr && from_.places->yield_to_run();
    return !yielded;
  });
  source.rollback_quietly();
  spdlog::info("{}.{}: range helper {} committed {} ranges{}", pipeline_.name, table.name, number, committed,
               yielded ? ", then left its place to a run" : "");
  return yielded;
}

Status PgRangeCrew::run(const TableConfig& table, Target& own, std::size_t count, int helpers, const Job& job,
                        const Done& done) {
  JobBoard board(count, job, done, cancel_);
  const RunLock lock{TableKey{pipeline_.name, table.name}, std::nullopt};
  const int holder = state_.holder_of(lock);
  // The run's own sessions are a worker too: more helpers than the jobs
  // but one would wait for nothing.
  helpers = static_cast<int>(
      std::min<std::size_t>(static_cast<std::size_t>(std::max(helpers, 0)), count > 0 ? count - 1 : 0));
  if (holder == 0) helpers = 0;  // a store that holds no lock has no run to help
  std::string snapshot;
  if (helpers > 0) {
    const Status exported = as_result([&] { snapshot = export_snapshot(source_.connection()); });
    // The held transaction ended with it: the run cannot go on.
    if (!exported) {
      return Error{exported.error() + " (sharing the load's snapshot with its helpers; ranges.workers: 1 reads "
                                      "them without)",
                   exported.error_kind()};
    }
  }
  std::atomic<int> at_work{0};
  // Places helpers left to runs that waited: as many helpers may start
  // again. One that stopped otherwise (its sessions, its locks) is not
  // tried again in this load.
  std::atomic<int> given_up{0};
  int started = 0;
  // Every helper is joined, and its place left, whatever ends this.
  struct Crew {
    std::vector<std::thread> threads;
    ~Crew() {
      for (std::thread& t : threads) t.join();
    }
  } crew;
  crew.threads.reserve(static_cast<std::size_t>(helpers));
  // Starts helpers while fewer than `helpers` work and places are free:
  // at first, and again between the run's own ranges, in the places
  // helpers left to runs that have since ended.
  const auto top_up = [&] {
    while (at_work.load() < helpers && started < helpers + given_up.load() && board.jobs_left()) {
      if (from_.places != nullptr && !from_.places->try_enter_helper()) return;
      const int number = ++started;
      at_work.fetch_add(1);
      const auto work = [&, number] {
        try {
          if (help(table, lock, holder, snapshot, number, board)) given_up.fetch_add(1);
        } catch (const std::exception& e) {
          // Fewer helpers: the others, and the run's own sessions, read
          // its ranges. (A range that failed is the board's, not this.)
          spdlog::warn("{}.{}: range helper {} stopped: {}", pipeline_.name, table.name, number, e.what());
        }
        if (from_.places != nullptr) from_.places->leave_helper();
        at_work.fetch_sub(1);
      };
      try {
        crew.threads.emplace_back(work);
      } catch (const std::exception& e) {
        if (from_.places != nullptr) from_.places->leave_helper();
        at_work.fetch_sub(1);
        spdlog::warn("{}.{}: range helper {} could not start: {}", pipeline_.name, table.name, number, e.what());
        return;
      }
    }
  };
  if (helpers > 0) top_up();
  board.work(own, [&] {
    if (helpers > 0) top_up();
    return true;
  });
  for (std::thread& t : crew.threads) t.join();
  crew.threads.clear();
  return board.outcome();
}

}  // namespace tidemark
