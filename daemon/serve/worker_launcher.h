// Runs tables for the TableScheduler on a bounded Asio thread_pool, never on
// the loop thread: each run (a load, or a reconcile of a table with
// deletes:) takes its sessions from a shared ConnectionPool through a
// TableRunner, reports its figures to the metrics, and its end is posted
// back to the loop. Owned by the Scheduler; launch() and
// cancel_all() must be called on the loop thread.
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
#include "core/run/table_ownership.h"
#include "core/schedule/scheduler_ports.h"
#include "daemon/pg/data/shared_reads.h"
#include "daemon/pg/libpq/connection_pool.h"
#include "daemon/serve/metrics_registry.h"
#include "daemon/serve/state_monitor.h"
#include "daemon/serve/table_runner.h"

namespace tidemark {

class WorkerLauncher final : public RunLauncher {
 public:
  using Finished = std::function<void(const TableKey&, const RunSummary&, JobKind)>;
  using Alone = std::function<void(const Firing&)>;

  // `workers` threads and as many idle sessions per database. `on_finished`
  // is called on the loop thread when a run ends, `on_alone` when a batch
  // hands a run back (TableScheduler::run_alone). A run goes on only while
  // `ownership` says this member owns its table, asked once the run holds
  // the table's lock. The loop, metrics, monitor and ownership must outlive
  // the launcher.
  WorkerLauncher(boost::asio::io_context& loop, MetricsRegistry& metrics, StateMonitor& monitor,
                 const TableOwnership& ownership, std::size_t workers, Finished on_finished, Alone on_alone);
  // Cancels the runs still going and waits for the workers to end.
  ~WorkerLauncher() override;

  void launch(const RunOrder& order) override;
  void launch_batch(const std::vector<RunOrder>& orders) override;
  void cancel_all() override;

 private:
  // For each of a job's orders, in order: its run's summary, or nothing:
  // it waits to run alone.
  using Outcomes = std::vector<std::optional<RunSummary>>;

  // The one way a job runs: `work` on a worker, cancelled through one
  // token for all its orders, each order's end posted back to the loop.
  void start(const std::vector<RunOrder>& orders, std::function<Outcomes(const CancelToken&)> work);
  // What each kind of job does on its worker, and reports to the metrics
  // and the state monitor.
  RunSummary load(const RunOrder& order, const CancelToken& cancel);
  RunSummary reconcile(const RunOrder& order, const CancelToken& cancel);
  Outcomes batch(const std::vector<RunOrder>& orders, const CancelToken& cancel);
  // A runner on the launcher's sessions and ownership; for one order, it
  // records the firing the order serves.
  TableRunner runner_for(std::shared_ptr<const Config> config);
  TableRunner runner_for(const RunOrder& order);

  boost::asio::io_context& loop_;
  MetricsRegistry& metrics_;
  StateMonitor& monitor_;
  const TableOwnership& ownership_;
  Finished on_finished_;
  Alone on_alone_;
  ConnectionPool sessions_;  // before the workers: they give sessions back to it until they stop
  SharedReads shared_reads_;  // likewise
  boost::asio::thread_pool pool_;
  std::map<JobKey, std::shared_ptr<CancelToken>> running_;  // loop thread only
};

}  // namespace tidemark
