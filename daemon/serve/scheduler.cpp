#include "daemon/serve/scheduler.h"

#include <boost/asio/post.hpp>

namespace tidemark {

Scheduler::Scheduler(boost::asio::io_context& loop, MetricsRegistry& metrics, StateMonitor& monitor,
                     std::size_t workers)
    : loop_(loop),
      reporter_(metrics),
      launcher_(loop, metrics, monitor, gate_, workers,
                [this](const TableKey& table, const RunSummary& summary, JobKind kind) {
                  tables_.run_finished(table, summary, kind);
                }),
      alarm_(loop, [this] { tables_.wake(); }),
      tables_(workers, clock_, alarm_, launcher_, reporter_) {}

void Scheduler::start(std::shared_ptr<const Config> config, const LastStarts& last_starts) {
  tables_.start(std::move(config), last_starts);
}

void Scheduler::start_in_fleet(std::shared_ptr<const Config> config) {
  gate_.set(FleetView::none());
  tables_.start(std::move(config), {}, FleetView::none());
}

void Scheduler::assign(FleetView view, const std::optional<LastStarts>& last_starts) {
  gate_.set(view);
  tables_.assign(std::move(view), last_starts);
}

void Scheduler::reload(std::shared_ptr<const Config> config) { tables_.reload(std::move(config)); }

void Scheduler::stop(std::chrono::seconds grace, std::function<void()> done) {
  tables_.stop(grace, [this, done = std::move(done)] { boost::asio::post(loop_, done); });
}

}  // namespace tidemark
