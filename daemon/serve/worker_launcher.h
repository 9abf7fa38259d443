// Runs jobs for the TableScheduler on a bounded Asio thread_pool, never on
// the loop thread: each job (a load, a batch of loads, a reconcile) runs
// through a JobRunner on sessions of a shared ConnectionPool, which tells
// its end to the job-end chain (metrics, log, state monitor); the end is
// then posted back to the loop for the scheduler. Owned by the Scheduler;
// launch() and cancel_all() must be called on the loop thread.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <vector>

#include "core/run/cancel_token.h"
#include "core/run/run_places.h"
#include "core/run/table_ownership.h"
#include "core/schedule/scheduler_ports.h"
#include "daemon/pg/data/shared_reads.h"
#include "daemon/pg/libpq/connection_pool.h"
#include "core/schedule/job_ends.h"
#include "daemon/serve/job_runner.h"

namespace tidemark {

class WorkerLauncher final : public RunLauncher {
 public:
  using Finished = std::function<void(const TableKey&, const RunSummary&, JobKind)>;
  using Alone = std::function<void(const Firing&)>;

  // `workers` threads and as many idle sessions per database. `progress`
  // hears the jobs' chunks and horizons, `ends` their starts and ends, on
  // the workers. `on_finished` is called on the loop thread when a run
  // ends, `on_alone` when a batch hands a run back
  // (TableScheduler::run_alone). A run goes on only while `ownership` says
  // this member owns its table, asked once the run holds the table's lock.
  // The loop, listeners and ownership must outlive the launcher.
  WorkerLauncher(boost::asio::io_context& loop, RunObserver& progress, JobEnds& ends,
                 const TableOwnership& ownership, std::size_t workers, Finished on_finished, Alone on_alone);
  // Cancels the runs still going and waits for the workers to end.
  ~WorkerLauncher() override;

  void launch(const RunOrder& order) override;
  void launch_batch(const std::vector<RunOrder>& orders) override;
  void cancel_all() override;

 private:
  // Runs `orders` as one job on a worker, cancelled through one token for
  // all of them; each order's end is posted back to the loop.
  void start(std::vector<RunOrder> orders, Job job);

  boost::asio::io_context& loop_;
  RunObserver& progress_;
  JobEnds& ends_;
  const TableOwnership& ownership_;
  Finished on_finished_;
  Alone on_alone_;
  ConnectionPool sessions_;  // before the workers: they give sessions back to it until they stop
  RunPlaces places_;          // likewise: the jobs and their range helpers take and leave places
  SharedReads shared_reads_;  // likewise
  boost::asio::thread_pool pool_;
  std::map<JobKey, std::shared_ptr<CancelToken>> running_;  // loop thread only
};

}  // namespace tidemark
