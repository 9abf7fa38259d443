// The firings of tables waiting for a free worker (SPEC §7): a firing that
// finds every worker busy waits, oldest scheduled firing first, and is
// never dropped for lack of a worker; a table's job (its load, its
// reconcile) has at most one run going or waiting, so a firing of a job
// that is running or already waiting is coalesced (an overrun). A worker
// may take waiting firings along with the one it starts (a batch): they
// share its worker, which is free again once each of them finished or went
// back to wait. Pure bookkeeping over values: no clock, no threads. Owned
// by the scheduler and used on its loop thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "core/run/run_ports.h"
#include "core/run/table_key.h"
#include "core/schedule/job_kind.h"
#include "core/time/time_types.h"

namespace tidemark {

struct Firing {
  TableKey table;
  Instant scheduled;  // when it was due: the queue's order, and the start delay
  RunTrigger trigger = RunTrigger::Schedule;
  JobKind kind = JobKind::Load;
  // Sent back by a batch to run on its own worker: never taken along again.
  bool alone = false;
};

class RunQueue {
 public:
  // `workers` >= 1: how many runs may be going at once.
  explicit RunQueue(std::size_t workers);

  enum class Offer {
    Start,    // a worker is free: the caller starts the run now (it counts as running)
    Queued,   // every worker is busy: it waits for finished()
    Overrun,  // the table is running or already waiting: coalesced, nothing to do
  };
  Offer offer(const Firing& firing);

  // A run of `table` ended (requires it running). When it was the last of
  // its worker's runs, the worker is free: the next waiting firing, if
  // any, is now running and returned for the caller to start.
  std::optional<Firing> finished(const TableKey& table, JobKind kind = JobKind::Load);

  // Takes up to `limit` waiting firings for which `along` holds (oldest
  // first) onto the worker of `lead`, which must be running; they count as
  // running from now on. Returns them.
  std::vector<Firing> take_along(const JobKey& lead, const std::function<bool(const Firing&)>& along,
                                 std::size_t limit);
  // A running firing goes back to wait (its batch could not finish it),
  // in its place by its scheduled time, as finished() then offer(), but
  // never coalesced: returns what finished() returns.
  std::optional<Firing> wait_again(const Firing& firing);

  // Drops the waiting firing of a table (a reload removed it); true when
  // there was one.
  bool remove(const TableKey& table, JobKind kind = JobKind::Load);
  // Drops every waiting firing (stopping: nothing new starts); returns them.
  std::vector<Firing> clear();

  std::size_t waiting() const { return by_order_.size(); }
  std::size_t running() const { return running_.size(); }
  // Workers busy: at most `workers`.
  std::size_t busy() const { return members_.size(); }
  bool is_running(const TableKey& table, JobKind kind = JobKind::Load) const {
    return running_.count(JobKey{table, kind}) > 0;
  }

 private:
  using Order = std::tuple<Instant, std::uint64_t, JobKey>;  // scheduled, then arrival

  void wait(const Firing& firing);

  std::size_t workers_;
  std::uint64_t arrivals_ = 0;
  std::uint64_t workers_started_ = 0;  // names each worker's turn
  std::map<JobKey, std::uint64_t> running_;  // to the worker turn it runs on
  std::map<std::uint64_t, std::size_t> members_;  // each busy worker's running firings
  std::set<Order> by_order_;
  std::map<JobKey, std::pair<Order, Firing>> waiting_;
};

}  // namespace tidemark
