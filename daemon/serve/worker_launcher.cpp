#include "daemon/serve/worker_launcher.h"

#include <boost/asio/post.hpp>

#include "core/schedule/job_kinds.h"
#include "daemon/serve/table_runner.h"

namespace tidemark {
namespace {

// How long an unused session to a database stays open: long enough to
// carry a table fired every minute from one run to the next.
constexpr std::chrono::seconds kIdleSessionTimeout{90};

}  // namespace

WorkerLauncher::WorkerLauncher(boost::asio::io_context& loop, MetricsRegistry& metrics, StateMonitor& monitor,
                               const TableOwnership& ownership, std::size_t workers, Finished on_finished,
                               Alone on_alone)
    : loop_(loop),
      metrics_(metrics),
      monitor_(monitor),
      ownership_(ownership),
      on_finished_(std::move(on_finished)),
      on_alone_(std::move(on_alone)),
      sessions_(workers, kIdleSessionTimeout),
      pool_(workers) {}

WorkerLauncher::~WorkerLauncher() {
  cancel_all();
  pool_.join();
}

void WorkerLauncher::launch(const RunOrder& order) {
  if (order.firing.kind == JobKind::Reconcile) {
    start({order}, [this, order](const CancelToken& cancel) { return Outcomes{reconcile(order, cancel)}; });
  } else {
    start({order}, [this, order](const CancelToken& cancel) { return Outcomes{load(order, cancel)}; });
  }
}

void WorkerLauncher::launch_batch(const std::vector<RunOrder>& orders) {
  start(orders, [this, orders](const CancelToken& cancel) { return batch(orders, cancel); });
}

void WorkerLauncher::start(const std::vector<RunOrder>& orders, std::function<Outcomes(const CancelToken&)> work) {
  // Cancelling any of a job's runs stops the job.
  auto cancel = std::make_shared<CancelToken>();
  for (const RunOrder& order : orders) running_[JobKey{order.firing.table, order.firing.kind}] = cancel;
  boost::asio::post(pool_, [this, orders, work = std::move(work), cancel] {
    const Outcomes outcomes = work(*cancel);
    if (outcomes.size() != orders.size()) std::abort();  // one outcome an order
    boost::asio::post(loop_, [this, orders, outcomes] {
      for (std::size_t i = 0; i < orders.size(); ++i) {
        const Firing& firing = orders[i].firing;
        running_.erase(JobKey{firing.table, firing.kind});
        if (outcomes[i]) {
          on_finished_(firing.table, *outcomes[i], firing.kind);
        } else {
          on_alone_(firing);
        }
      }
    });
  });
}

RunSummary WorkerLauncher::load(const RunOrder& order, const CancelToken& cancel) {
  const auto started = std::chrono::system_clock::now();
  metrics_.run_started(order.firing.table,
                       started - std::chrono::system_clock::time_point(order.firing.scheduled.time_since_epoch()));
  const TimedSummary result = runner_for(order).run(*order.pipeline, *order.table, order.firing.trigger, cancel);
  metrics_.run_ended(order.firing.table, result.duration);
  monitor_.poke(order.firing.table, /*reconcile=*/false);
  return result.summary;
}

RunSummary WorkerLauncher::reconcile(const RunOrder& order, const CancelToken& cancel) {
  ReconcileRequest request;
  // A load holds it: the scheduler tries again after the backoff.
  request.wait_for_lock = job_kind(JobKind::Reconcile).held_lock != HeldLock::RetryAfterBackoff;
  const ReconcileReport report = runner_for(order).reconcile(*order.pipeline, *order.table, request, cancel);
  // What its batches committed, even when a later one failed.
  metrics_.rows_repaired(order.firing.table, report.counts.missing, report.counts.deleted, report.counts.changed);
  // The reconcile gauges follow its run row, which the state monitor
  // reads: their one writer.
  monitor_.poke(order.firing.table, /*reconcile=*/true);
  return report.run;
}

WorkerLauncher::Outcomes WorkerLauncher::batch(const std::vector<RunOrder>& orders, const CancelToken& cancel) {
  const auto started = std::chrono::system_clock::now();
  std::vector<BatchMember> members;
  for (const RunOrder& order : orders) {
    members.push_back(BatchMember{order.table, order.firing.trigger, order.firing.scheduled});
    metrics_.in_progress(order.firing.table, true);
  }
  // Each member's run row records its own firing (BatchMember::scheduled).
  const auto results = runner_for(orders.front().config).run_batch(*orders.front().pipeline, members, cancel);
  Outcomes outcomes;
  for (std::size_t i = 0; i < orders.size(); ++i) {
    const Firing& firing = orders[i].firing;
    if (!results[i]) {
      metrics_.in_progress(firing.table, false);
      outcomes.emplace_back();
      continue;
    }
    // Every run of the batch started with it and ended with it.
    metrics_.run_started(firing.table,
                         started - std::chrono::system_clock::time_point(firing.scheduled.time_since_epoch()));
    metrics_.run_ended(firing.table, results[i]->duration);
    monitor_.poke(firing.table, /*reconcile=*/false);
    outcomes.emplace_back(results[i]->summary);
  }
  return outcomes;
}

TableRunner WorkerLauncher::runner_for(std::shared_ptr<const Config> config) {
  return TableRunner(std::move(config), metrics_, ownership_, JobSessions{&sessions_, &shared_reads_});
}

TableRunner WorkerLauncher::runner_for(const RunOrder& order) {
  TableRunner runner = runner_for(order.config);
  runner.set_firing(order.firing.scheduled);
  return runner;
}

void WorkerLauncher::cancel_all() {
  for (auto& [key, cancel] : running_) cancel->cancel();
}

}  // namespace tidemark
