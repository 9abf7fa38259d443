#include "daemon/serve/worker_launcher.h"

#include <boost/asio/post.hpp>

#include "core/schedule/job_kinds.h"

namespace tidemark {
namespace {

// How long an unused session to a database stays open: long enough to
// carry a table fired every minute from one run to the next.
constexpr std::chrono::seconds kIdleSessionTimeout{90};

}  // namespace

WorkerLauncher::WorkerLauncher(boost::asio::io_context& loop, RunObserver& progress, JobEnds& ends,
                               const TableOwnership& ownership, std::size_t workers, Finished on_finished,
                               Alone on_alone)
    : loop_(loop),
      progress_(progress),
      ends_(ends),
      ownership_(ownership),
      on_finished_(std::move(on_finished)),
      on_alone_(std::move(on_alone)),
      sessions_(workers, kIdleSessionTimeout),
      places_(static_cast<int>(workers)),
      pool_(workers) {}

WorkerLauncher::~WorkerLauncher() {
  cancel_all();
  pool_.join();
}

void WorkerLauncher::launch(const RunOrder& order) {
  Job job;
  if (order.firing.kind == JobKind::Reconcile) {
    ReconcileRequest request;  // its run rows record the kind's trigger, whatever fired it
    // A load holds it: the scheduler tries again after the backoff.
    request.wait_for_lock = job_kind(JobKind::Reconcile).held_lock != HeldLock::RetryAfterBackoff;
    job = reconcile_job(*order.pipeline, *order.table, request, order.firing.scheduled);
  } else {
    job = load_job(*order.pipeline, *order.table, order.firing.trigger, order.firing.scheduled);
  }
  start({order}, std::move(job));
}

void WorkerLauncher::launch_batch(const std::vector<RunOrder>& orders) {
  Job job;
  job.kind = orders.front().firing.kind;
  job.pipeline = orders.front().pipeline;
  for (const RunOrder& order : orders) {
    job.members.push_back(JobMember{order.table, order.firing.trigger, order.firing.scheduled});
  }
  start(orders, std::move(job));
}

void WorkerLauncher::start(std::vector<RunOrder> orders, Job job) {
  // Cancelling any of a job's runs stops the job.
  auto cancel = std::make_shared<CancelToken>();
  for (const RunOrder& order : orders) running_[JobKey{order.firing.table, order.firing.kind}] = cancel;
  boost::asio::post(pool_, [this, orders = std::move(orders), job = std::move(job), cancel] {
    // The orders hold the configuration the job's tables live in.
    JobRunner runner(orders.front().config, progress_, ownership_, ends_,
                     JobSessions{&sessions_, &shared_reads_, &places_});
    // The scheduler starts no more jobs than there are places: one waits
    // here only for a range helper to finish its range.
    struct Place {
      RunPlaces& places;
      explicit Place(RunPlaces& of) : places(of) { places.enter_run(); }
      ~Place() { places.leave_run(); }
    };
    const Place place(places_);
    const auto ends = runner.run(job, *cancel);
    boost::asio::post(loop_, [this, orders, ends] {
      for (std::size_t i = 0; i < orders.size(); ++i) {
        const Firing& firing = orders[i].firing;
        running_.erase(JobKey{firing.table, firing.kind});
        if (ends[i]) {
          on_finished_(firing.table, ends[i]->summary, firing.kind);
        } else {
          on_alone_(firing);
        }
      }
    });
  });
}

void WorkerLauncher::cancel_all() {
  for (auto& [key, cancel] : running_) cancel->cancel();
}

}  // namespace tidemark
