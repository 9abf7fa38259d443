#include "daemon/pg/data/pg_range_crew.h"

#include <spdlog/spdlog.h>

#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
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

  // Works through the jobs with `target` while `go_on` says so.
  template <typename GoOn>
  void work(Target& target, GoOn go_on) {
    while (go_on()) {
      std::size_t index = 0;
      {
        const std::lock_guard<std::mutex> lock(mutex);
        if (failed || cancel.cancelled() || next >= count) return;
        index = next++;
      }
      const Result<ChunkCounts> counts = job(target, index);
      const std::lock_guard<std::mutex> lock(mutex);
      if (!counts) {
        if (!failed) failed = counts.failure();
      } else {
        done(index, *counts);
      }
    }
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
  std::string snapshot;
  if (helpers > 0 && source_.connection().in_transaction()) {
    try {
      snapshot = export_snapshot(source_.connection());
    } catch (const PgError& e) {
      // The run's own ranges fail the same way, and say why.
      spdlog::warn("{}.{}: the load's snapshot could not be shared, so its ranges are read by one session: {}",
                   pipeline_.name, table.name, e.what());
    }
  }
  const int holder = state_.holder_of(lock);
  std::vector<std::thread> crew;
  for (int h = 0; h < helpers && !snapshot.empty() && holder != 0; ++h) {
    if (from_.places != nullptr && !from_.places->try_enter_helper()) break;
    crew.emplace_back([&, h] {
      try {
        help(table, lock, holder, snapshot, board);
      } catch (const std::exception& e) {
        // Fewer helpers: the others, and the run's own session, read its
        // ranges. (A range that failed is no exception: the board has it.)
        spdlog::warn("{}.{}: range helper {} stopped: {}", pipeline_.name, table.name, h + 1, e.what());
      }
      if (from_.places != nullptr) from_.places->leave_helper();
    });
  }
  board.work(own, [] { return true; });
  for (std::thread& helper : crew) helper.join();
  if (board.failed) return *board.failed;
  return ok_status();
}

}  // namespace tidemark
