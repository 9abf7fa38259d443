#include "daemon/serve/scheduler.h"

#include <boost/asio/post.hpp>

namespace tidemark {

Scheduler::Scheduler(boost::asio::io_context& loop, MetricsRegistry& metrics, StateMonitor& monitor,
                     std::size_t workers)
    : loop_(loop),
      reporter_(metrics),
      ends_({&metrics, &log_, &monitor}),
      launcher_(loop, metrics, ends_, gate_, workers,
                [this](const TableKey& table, const RunSummary& summary, JobKind kind) {
                  loop_thread_.check("Scheduler: a run's end");
                  tables_.run_finished(table, summary, kind);
                },
                [this](const Firing& firing) {
                  loop_thread_.check("Scheduler: a batch's run handed back");
                  tables_.run_alone(firing);
                }),
      alarm_(loop,
             [this] {
               loop_thread_.check("Scheduler: the alarm");
               tables_.wake();
             }),
      tables_(workers, clock_, alarm_, launcher_, reporter_) {}

void Scheduler::start(std::shared_ptr<const Config> config, const LastStarts& last_starts) {
  loop_thread_.check("Scheduler::start");
  tables_.start(std::move(config), last_starts);
}

void Scheduler::start_in_fleet(std::shared_ptr<const Config> config) {
  loop_thread_.check("Scheduler::start_in_fleet");
  gate_.set(FleetView::none());
  tables_.start(std::move(config), {}, FleetView::none(), /*pauses_known=*/false);
}

void Scheduler::assign(FleetView view, const std::optional<LastStarts>& last_starts) {
  loop_thread_.check("Scheduler::assign");
  gate_.set(view);
  tables_.assign(std::move(view), last_starts);
}

void Scheduler::set_pauses(PauseSet pauses, const std::vector<CatchUpResume>& catch_ups) {
  loop_thread_.check("Scheduler::set_pauses");
  tables_.set_pauses(std::move(pauses), catch_ups);
}

void Scheduler::input_moved(const TableKey& input) {
  loop_thread_.check("Scheduler::input_moved");
  tables_.input_moved(input);
}

void Scheduler::reload(std::shared_ptr<const Config> config) {
  loop_thread_.check("Scheduler::reload");
  tables_.reload(std::move(config));
}

void Scheduler::stop(std::chrono::seconds grace, std::function<void()> done) {
  loop_thread_.check("Scheduler::stop");
  tables_.stop(grace, [this, done = std::move(done)] { boost::asio::post(loop_, done); });
}

std::size_t Scheduler::in_flight() const {
  loop_thread_.check("Scheduler::in_flight");
  return tables_.in_flight();
}

}  // namespace tidemark
