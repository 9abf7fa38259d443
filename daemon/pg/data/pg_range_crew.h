// The RangeCrew over PostgreSQL: each helper is a thread with sessions of
// its own (a PipelineConnections, from the daemon's pool when there is
// one), whose source transaction reads the snapshot the run's source
// session holds (export_snapshot, join_snapshot), whose target units hold
// the run's helper lock shared, and whose records check the run's lock in
// pg_locks (PgStateStore::help). Built with the run's ports, on its thread;
// run() starts its helpers and joins them before it returns.
#pragma once

#include <cstddef>
#include <string>

#include "core/config/config_model.h"
#include "core/run/cancel_token.h"
#include "core/run/range_crew.h"
#include "core/run/run_meter.h"
#include "core/run/run_places.h"
#include "daemon/pg/data/pg_source.h"
#include "daemon/pg/data/shared_reads.h"
#include "daemon/pg/libpq/connection_pool.h"
#include "daemon/pg/state/pg_state_store.h"

namespace tidemark {

struct JobBoard;

// Where a run's helpers get their sessions and their places: the pool and
// shared reads as the run's own (either may be absent), and the daemon's
// places (absent: `workers` alone bounds them, as for a command).
struct CrewSessions {
  ConnectionPool* pool = nullptr;
  SharedReads* shared = nullptr;
  RunPlaces* places = nullptr;
  RunMeter* meter = nullptr;  // counts the helpers' copies too
};

class PgRangeCrew final : public RangeCrew {
 public:
  // `source` and `state` are the run's own: the session holding the
  // snapshot, and the store holding the lock. All must outlive the crew.
  PgRangeCrew(const Config& config, const PipelineConfig& pipeline, CrewSessions from, PgSource& source,
              PgStateStore& state, const CancelToken& cancel)
      : config_(config), pipeline_(pipeline), from_(from), source_(source), state_(state), cancel_(cancel) {}

  Status run(const TableConfig& table, Target& own, std::size_t count, int helpers, const Job& job,
             const Done& done) override;

 private:
  // Helper `number`'s work, on its thread: its sessions opened, the
  // snapshot joined, the table's locks taken, then the board's jobs until
  // none is left or a run waits for its place. True when it left its place
  // to a run; throws when it cannot start.
  bool help(const TableConfig& table, const RunLock& lock, int holder, const std::string& snapshot, int number,
            JobBoard& board);

  const Config& config_;
  const PipelineConfig& pipeline_;
  const CrewSessions from_;
  PgSource& source_;
  PgStateStore& state_;
  const CancelToken& cancel_;
};

}  // namespace tidemark
