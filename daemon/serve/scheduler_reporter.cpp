#include "daemon/serve/scheduler_reporter.h"

#include <spdlog/spdlog.h>

#include "core/time/instant_text.h"

namespace tidemark {

void SchedulerReporter::overrun(const TableKey& table, Instant scheduled) {
  metrics_.run_skipped(table, SkipReason::Overrun);
  spdlog::warn("{}: skipped the firing of {}: the previous run is still going or already waiting", table.display(),
               format_instant(scheduled));
}

void SchedulerReporter::queue_length(std::size_t waiting) { metrics_.set_queued(waiting); }

void SchedulerReporter::catching_up(const TableKey& table, Instant last_started) {
  spdlog::info("{}: firings were missed since its last run at {}; running once now", table.display(),
               format_instant(last_started));
}

void SchedulerReporter::retry_armed(const TableKey& table, Instant at, int failures) {
  spdlog::info("{}: retrying at {} (transient failure {} in a row)", table.display(), format_instant(at), failures);
}

void SchedulerReporter::not_retried(const TableKey& table, std::optional<Instant> next) {
  spdlog::error("{}: the failure is permanent and is not retried; the table waits for {}, a reload (SIGHUP) or "
                "`tidemark run`",
                table.display(), next ? "its next firing at " + format_instant(*next) : std::string("a reload"));
}

void SchedulerReporter::retry_after_reload(const TableKey& table) {
  spdlog::info("{}: its last run failed permanently; trying again after the reload", table.display());
}

void SchedulerReporter::stopping(std::size_t dropped, std::size_t running, std::chrono::seconds grace) {
  if (dropped > 0) spdlog::info("stopping: {} waiting firing(s) will not start", dropped);
  if (running > 0) spdlog::info("stopping: waiting up to {}s for {} run(s) in flight", grace.count(), running);
}

void SchedulerReporter::grace_over(std::size_t running) {
  spdlog::warn("stopping: the grace period is over; cancelling {} run(s)", running);
}

void SchedulerReporter::abandoned(std::size_t running) {
  spdlog::error("stopping: {} run(s) did not end after cancellation; leaving them", running);
}

void SchedulerReporter::ownership(std::size_t owned, std::size_t gained, std::size_t lost, std::size_t members) {
  metrics_.fleet_view(members, owned, gained + lost);
  if (members == 0) {
    spdlog::warn("fleet: this member's lease ended; it fires nothing until it has joined again");
  } else {
    spdlog::info("fleet: {} live member{}; this one owns {} jobs (gained {}, lost {})", members,
                 members == 1 ? "" : "s", owned, gained, lost);
  }
}

void SchedulerReporter::lease_lapsed() {
  metrics_.fleet_lapsed();
  spdlog::warn("fleet: no renewal of this member's lease came back in time; it fires nothing until one does");
}

}  // namespace tidemark
