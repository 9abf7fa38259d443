#include "daemon/pg/data/pg_range_crew.h"

#include <spdlog/spdlog.h>

#include <algorithm>
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
  template <typename GoOn>
  void work(Target& target, GoOn go_on) {
    while (go_on()) {
      std::size_t index = 0;
      {
        const std::lock_guard<std::mutex> lock(mutex);
        if (failed || cancel.cancelled() || next >= count) return;
        index = next++;
      }
      Result<ChunkCounts> counts = Error{"a range was not committed"};
      try {
        counts = job(target, index);
      } catch (const std::exception& e) {
        counts = Error{e.what()};
      }
      const std::lock_guard<std::mutex> lock(mutex);
      if (!counts) {
        if (!failed) failed = counts.failure();
      } else {
        done(index, *counts);
      }
    }
  }

  // What the jobs came to once every worker stopped.
  Status outcome() const {
    if (failed) return *failed;
    if (next < count) return Error{cancel.reason()};  // only a cancel leaves jobs untaken
    return ok_status();
  }
};

void PgRangeCrew::help(const TableConfig& table, const RunLock& lock, int holder, const std::string& snapshot,
                       JobBoard& board) {
  PipelineConnections sessions(from_.pool, from_.shared);
  sessions.open_state(config_);
  sessions.open_data(config_, pipeline_);
  PgRunPorts ports(sessions, cancel_);
  ports.state.help(lock, holder);
  ports.target.help();
  // The target as the run's first range left it.
  if (const auto checked = ports.target.check(table); !checked) throw std::runtime_error(checked.failure().message);
  join_snapshot(*sessions.source, snapshot);
  // The table's lock, at once or never: a rewrite or TRUNCATE waiting
  // behind the run's lock would queue this request behind itself, and
  // the run, which waits for its helpers before its transaction ends,
  // would never let it through. The run reads the ranges instead.
  try {
    sessions.source->exec("LOCK TABLE " + table.source_table->quoted() + " IN ACCESS SHARE MODE NOWAIT");
  } catch (const PgError& e) {
    if (e.sqlstate() != "55P03") throw;
    throw std::runtime_error("another session waits for the table's lock; the run reads the ranges without this "
                             "helper");
  }
  // Its copies count with the run's; not after the session goes back.
  struct Metered {
    PgConnection& session;
    ~Metered() { session.attach_meter(nullptr); }
  } metered{*sessions.source};
  if (from_.meter != nullptr) sessions.source->attach_meter(from_.meter);
  board.work(ports.target, [&] { return from_.places == nullptr || !from_.places->run_waiting(); });
  sessions.source->rollback_quietly();
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
  std::string snapshot;
  if (helpers > 0 && holder != 0) {
    const Status exported = as_result([&] { snapshot = export_snapshot(source_.connection()); });
    // The held transaction ended with it: the run cannot go on.
    if (!exported) {
      return Error{exported.error() + " (sharing the load's snapshot with its helpers; ranges.workers: 1 reads "
                                      "them without)",
                   exported.error_kind()};
    }
  }
  // Every helper is joined, and its place left, whatever ends this.
  struct Crew {
    std::vector<std::thread> threads;
    ~Crew() {
      for (std::thread& t : threads) t.join();
    }
  } crew;
  for (int h = 0; h < helpers; ++h) {
    if (from_.places != nullptr && !from_.places->try_enter_helper()) break;
    try {
      crew.threads.emplace_back([&, h] {
        try {
          help(table, lock, holder, snapshot, board);
        } catch (const std::exception& e) {
          // Fewer helpers: the others, and the run's own sessions, read
          // its ranges. (A range that failed is the board's, not this.)
          spdlog::warn("{}.{}: range helper {} stopped: {}", pipeline_.name, table.name, h + 1, e.what());
        }
        if (from_.places != nullptr) from_.places->leave_helper();
      });
    } catch (const std::system_error& e) {
      if (from_.places != nullptr) from_.places->leave_helper();
      spdlog::warn("{}.{}: range helper {} could not start: {}", pipeline_.name, table.name, h + 1, e.what());
      break;
    }
  }
  board.work(own, [] { return true; });
  for (std::thread& t : crew.threads) t.join();
  crew.threads.clear();
  return board.outcome();
}

}  // namespace tidemark
