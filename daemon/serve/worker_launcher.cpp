#include "daemon/serve/worker_launcher.h"

#include <boost/asio/post.hpp>

#include "daemon/serve/table_runner.h"

namespace tidemark {
namespace {

// How long an unused session to a database stays open: long enough to
// carry a table fired every minute from one run to the next.
constexpr std::chrono::seconds kIdleSessionTimeout{90};

}  // namespace

WorkerLauncher::WorkerLauncher(boost::asio::io_context& loop, MetricsRegistry& metrics, StateMonitor& monitor,
                               const FleetGate& gate, std::size_t workers, Finished on_finished, Alone on_alone)
    : loop_(loop),
      metrics_(metrics),
      monitor_(monitor),
      gate_(gate),
      on_finished_(std::move(on_finished)),
      on_alone_(std::move(on_alone)),
      sessions_(workers, kIdleSessionTimeout),
      pool_(workers) {}

WorkerLauncher::~WorkerLauncher() {
  cancel_all();
  pool_.join();
}

void WorkerLauncher::launch(const RunOrder& order) {
  const JobKey key{order.firing.table, order.firing.kind};
  auto cancel = std::make_shared<CancelToken>();
  running_[key] = cancel;
  if (order.firing.kind == JobKind::Reconcile) {
    boost::asio::post(pool_, [this, order, key, cancel] {
      TableRunner runner = runner_for(order);
      ReconcileRequest request;
      request.wait_for_lock = false;  // a load holds it: the scheduler tries again after the backoff
      const ReconcileReport report = runner.reconcile(*order.pipeline, *order.table, request, *cancel);
      // What its batches committed, even when a later one failed.
      metrics_.rows_repaired(order.firing.table, report.counts.missing, report.counts.deleted,
                             report.counts.changed);
      // The reconcile gauges follow its run row, which the state monitor
      // reads: their one writer.
      monitor_.poke(order.firing.table, /*reconcile=*/true);
      boost::asio::post(loop_, [this, key, table = order.firing.table, summary = report.run] {
        running_.erase(key);
        on_finished_(table, summary, JobKind::Reconcile);
      });
    });
    return;
  }
  boost::asio::post(pool_, [this, order, key, cancel] {
    const auto started = std::chrono::system_clock::now();
    metrics_.run_started(order.firing.table,
                         started - std::chrono::system_clock::time_point(order.firing.scheduled.time_since_epoch()));
    TableRunner runner = runner_for(order);
    const TimedSummary result = runner.run(*order.pipeline, *order.table, order.firing.trigger, *cancel);
    metrics_.run_ended(order.firing.table, result.duration);
    monitor_.poke(order.firing.table, /*reconcile=*/false);
    boost::asio::post(loop_, [this, key, table = order.firing.table, summary = result.summary] {
      running_.erase(key);
      on_finished_(table, summary, JobKind::Load);
    });
  });
}

void WorkerLauncher::launch_batch(const std::vector<RunOrder>& orders) {
  // One cancel token for the batch: cancelling any of its runs stops it.
  auto cancel = std::make_shared<CancelToken>();
  for (const RunOrder& order : orders) running_[JobKey{order.firing.table, order.firing.kind}] = cancel;
  boost::asio::post(pool_, [this, orders, cancel] {
    const auto started = std::chrono::system_clock::now();
    std::vector<BatchMember> members;
    for (const RunOrder& order : orders) {
      members.push_back(BatchMember{order.table, order.firing.trigger, order.firing.scheduled});
      metrics_.in_progress(order.firing.table, true);
    }
    TableRunner runner(orders.front().config, metrics_, &sessions_, &shared_reads_);
    runner.set_ownership_check([this](const TableKey& table) { return gate_.owns(table); });
    const auto results = runner.run_batch(*orders.front().pipeline, members, *cancel);
    for (std::size_t i = 0; i < orders.size(); ++i) {
      const Firing& firing = orders[i].firing;
      if (!results[i]) {
        metrics_.in_progress(firing.table, false);
        continue;
      }
      // Every run of the batch started with it and ended with it.
      metrics_.run_started(firing.table,
                           started - std::chrono::system_clock::time_point(firing.scheduled.time_since_epoch()));
      metrics_.run_ended(firing.table, results[i]->duration);
      monitor_.poke(firing.table, /*reconcile=*/false);
    }
    boost::asio::post(loop_, [this, orders, results] {
      for (std::size_t i = 0; i < orders.size(); ++i) {
        const Firing& firing = orders[i].firing;
        running_.erase(JobKey{firing.table, firing.kind});
        if (results[i]) {
          on_finished_(firing.table, results[i]->summary, JobKind::Load);
        } else {
          on_alone_(firing);
        }
      }
    });
  });
}

TableRunner WorkerLauncher::runner_for(const RunOrder& order) {
  TableRunner runner(order.config, metrics_, &sessions_, &shared_reads_);
  runner.set_ownership_check([this](const TableKey& table) { return gate_.owns(table); });
  runner.set_firing(order.firing.scheduled);
  return runner;
}

void WorkerLauncher::cancel_all() {
  for (auto& [key, cancel] : running_) cancel->cancel();
}

}  // namespace tidemark
