#include "daemon/serve/state_monitor.h"

#include <algorithm>
#include <cstdlib>

#include <spdlog/spdlog.h>

#include "daemon/pg/data/pipeline_connections.h"
#include "daemon/pg/libpq/pg_connection.h"
#include "daemon/pg/state/progress_book.h"
#include "daemon/pg/state/run_history_pruner.h"
#include "daemon/pg/state/state_reader.h"
#include "daemon/pg/state/state_schema.h"

namespace tidemark {

void StateMonitor::start(std::shared_ptr<const Config> config) {
  set_config(std::move(config));
  thread_ = std::thread([this] { loop(); });
}

void StateMonitor::set_config(std::shared_ptr<const Config> config) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    config_ = std::move(config);
    reconfigured_ = true;
  }
  wake_.notify_one();
}

void StateMonitor::job_ended(const JobEnded& ended) {
  const std::lock_guard<std::mutex> lock(mutex_);
  // The loop reads it within kRanEvery: no need to wake it at once.
  switch (ended.kind) {
    case JobKind::Load: loads_ran_.insert(ended.summary.table); break;  // its watermark and last success
    case JobKind::Reconcile: reconciles_ran_.insert(ended.summary.table); break;  // the reconcile gauges
  }
}

void StateMonitor::stop() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void StateMonitor::loop() {
  auto next_full = std::chrono::steady_clock::now();
  for (;;) {
    std::shared_ptr<const Config> config;
    std::set<TableKey> loads;
    std::set<TableKey> reconciles;
    bool full = false;
    bool reconfigured = false;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      // Every kRanEvery for the tables that ran, every interval for all.
      const auto until = std::min(next_full, std::chrono::steady_clock::now() + kRanEvery);
      wake_.wait_until(lock, until, [this] { return stopping_ || reconfigured_; });
      if (stopping_) return;
      reconfigured = reconfigured_;
      full = reconfigured_ || std::chrono::steady_clock::now() >= next_full;
      reconfigured_ = false;
      loads.swap(loads_ran_);
      reconciles.swap(reconciles_ran_);
      config = config_;
    }
    if (full) {
      // A reload may have pointed the state connection elsewhere, and
      // brought tables whose gauges nobody has read.
      if (reconfigured) state_.reset();
      refresh(*config, /*everything=*/reconfigured);
      next_full = std::chrono::steady_clock::now() + interval_;
    }
    // After a full refresh too: it skips the tables read lately, and a run
    // may have ended since.
    if (!loads.empty() || !reconciles.empty()) refresh_ran(*config, loads, reconciles);
    record_progress(*config);
  }
}

void StateMonitor::record_progress(const Config& config) {
  const auto now = std::chrono::steady_clock::now();
  if (now < next_progress_) return;
  next_progress_ = now + kProgressEvery;
  std::vector<CopyProgress> changed;
  std::map<TableKey, std::int64_t> recorded;
  for (const auto& [table, counts] : metrics_.rows_in_progress()) {
    recorded[table] = counts.first;
    const auto before = progress_recorded_.find(table);
    if (counts.first > 0 && (before == progress_recorded_.end() || before->second != counts.first)) {
      changed.push_back(CopyProgress{table, counts.first, counts.second, 0});
    }
  }
  progress_recorded_ = std::move(recorded);
  if (changed.empty()) return;
  try {
    const Status written = ProgressBook(state_session(config)).write(changed);
    if (!written) state_.reset();  // what `status` shows of runs in flight waits for the next try
  } catch (const std::exception&) {
    state_.reset();
  }
}

PgConnection& StateMonitor::state_session(const Config& config) {
  if (state_ && (!state_->reusable() || state_->closed_by_server())) state_.reset();
  if (!state_) state_ = connect_to(config, config.daemon.state);
  return *state_;
}

void StateMonitor::read_tables(const Config& config, const std::set<TableKey>* only, bool stale_only) {
  // Age and stale are judged on the state database's clock, read with
  // the state: the host's clock may differ from the one that stamped
  // moved_at, and `tidemark status` must say what the gauges say.
  const auto now = std::chrono::steady_clock::now();
  std::vector<TableKey> tables;
  std::vector<const TableConfig*> configured;  // tables' configurations, in the same order
  for (const PipelineConfig& p : config.pipelines) {
    for (const TableConfig& t : p.tables) {
      TableKey key{p.name, t.name};
      if (only != nullptr && only->count(key) == 0) continue;  // gone by a reload, or not asked
      if (stale_only) {
        const auto read = read_at_.find(key);
        if (read != read_at_.end() && now - read->second < kReadAllEvery) continue;
      }
      tables.push_back(std::move(key));
      configured.push_back(&t);
    }
  }
  if (tables.empty()) return;
  StateReader reader(state_session(config));
  const auto snapshot = reader.table_states(tables);
  if (!snapshot) throw std::runtime_error(snapshot.error());
  if (snapshot->tables.size() != tables.size()) std::abort();  // one state per table asked, in order
  for (std::size_t i = 0; i < tables.size(); ++i) {
    const TableState& s = snapshot->tables[i];
    TableProgress progress;
    progress.watermark_unix = s.watermark_unix;
    progress.moved_unix = s.moved_at;
    progress.last_success_unix = s.last_success_at;
    progress.ahead = s.ahead_of_source;
    // After a restart the gauge starts from what the last run found.
    if (s.schema_drift) progress.schema_drift = !s.schema_drift->empty();
    metrics_.table_progress(s.table, progress, snapshot->now);
    // After a restart the reconcile gauges come back from the run rows.
    if (s.last_reconcile) metrics_.reconcile_finished(s.table, s.last_reconcile->deleted, s.last_reconcile->missing);
    metrics_.reconcile_failed(s.table, s.reconcile_failing(*configured[i]));
    if (s.unseen_changes) metrics_.unseen_changes(s.table, *s.unseen_changes);
    read_at_[s.table] = now;
  }
}

void StateMonitor::refresh_ran(const Config& config, const std::set<TableKey>& loads,
                               const std::set<TableKey>& reconciles) {
  if (!migrated_) return;  // the full refresh comes first and applies the schema
  try {
    if (!loads.empty()) {
      const auto moves = StateReader(state_session(config)).table_moves({loads.begin(), loads.end()});
      if (!moves) throw std::runtime_error(moves.error());
      const auto now = std::chrono::steady_clock::now();
      for (const TableMoves& m : moves->tables) {
        read_at_[m.table] = now;
        TableProgress progress;
        progress.watermark_unix = m.watermark_unix;
        progress.moved_unix = m.moved_at;
        progress.last_success_unix = m.last_success_at;
        metrics_.table_progress(m.table, progress, moves->now);
      }
    }
    if (!reconciles.empty()) read_tables(config, &reconciles, /*stale_only=*/false);
  } catch (const std::exception& e) {
    // The next full refresh says whether the state database is down.
    state_.reset();
    spdlog::debug("cannot read the state of the tables that ran: {}", e.what());
  }
}

void StateMonitor::refresh(const Config& config, bool everything) {
  try {
    PgConnection& state = state_session(config);
    metrics_.database_up(config.daemon.state, true);
    if (!migrated_) {
      migrate_state_schema(state);
      migrated_ = true;
      // Reached at start-up: ready from here. The tables' states below are
      // a query over every table (half a second at 50,000 tables) that
      // readiness need not wait for the first time; later refreshes say
      // ready only once it has succeeded, so a failing one cannot flap.
      health_.state_checked(true, {});
    }
    read_tables(config, nullptr, /*stale_only=*/!everything);
    health_.state_checked(true, {});
    if (const auto bytes = StateReader(state).schema_bytes()) metrics_.state_bytes(*bytes);
    prune_history(state, config.daemon.history.retention);
  } catch (const std::exception& e) {
    state_.reset();
    metrics_.database_up(config.daemon.state, false);
    health_.state_checked(false, e.what());
    spdlog::warn("cannot read the state database {}: {}", config.daemon.state, e.what());
  }
  // The other databases after the state, whose gauges (the watermarks,
  // last success, reconcile) a run waits for: each one down can take its
  // connect timeout.
  for (const ConnectionConfig& c : config.daemon.connections) {
    if (c.name == config.daemon.state) continue;  // tried above, where it is used
    try {
      connect_to(config, c.name);
      metrics_.database_up(c.name, true);
    } catch (const std::exception& e) {
      metrics_.database_up(c.name, false);
      spdlog::debug("connection {} is down: {}", c.name, e.what());
    }
  }
}

}  // namespace tidemark

namespace tidemark {

void StateMonitor::prune_history(PgConnection& state, std::chrono::seconds retention) {
  const auto now = std::chrono::steady_clock::now();
  if (now < next_prune_) return;
  // A pass holds this thread, and so the gauges' refresh and a shutdown:
  // it yields after kPruneFor, or at once when stopping, and the next
  // pass goes on kPruneAgain later.
  const auto pruned = RunHistoryPruner(state).prune(retention, [this, now] {
    const std::lock_guard<std::mutex> lock(mutex_);
    return stopping_ || std::chrono::steady_clock::now() - now > kPruneFor;
  });
  next_prune_ = std::chrono::steady_clock::now() + (pruned && !pruned->complete ? kPruneAgain : kPruneEvery);
  if (!pruned) {
    spdlog::warn("cannot prune the run history: {}", pruned.error());
  } else if (pruned->busy) {
    spdlog::debug("another member is pruning the run history");
  } else if (pruned->deleted > 0 || !pruned->complete) {
    spdlog::info("pruned {} runs older than the history's retention, in {} batches{}", pruned->deleted,
                 pruned->batches, pruned->complete ? "" : "; the next pass goes on");
  }
}

}  // namespace tidemark
