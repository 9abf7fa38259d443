// Carries the TableScheduler's decisions to the operator: overruns and the
// queue length into the metrics, retries, catch-ups and the stop path into
// the log. Owned by the Scheduler; called on the loop thread (the metrics
// registry it writes to is thread-safe).
#pragma once

#include "core/schedule/scheduler_ports.h"
#include "daemon/serve/metrics_registry.h"

namespace tidemark {

class SchedulerReporter final : public SchedulerEvents {
 public:
  // `metrics` must outlive the reporter.
  explicit SchedulerReporter(MetricsRegistry& metrics) : metrics_(metrics) {}

  void overrun(const TableKey& table, Instant scheduled) override;
  void queue_length(std::size_t waiting) override;
  void catching_up(const TableKey& table, Instant last_started) override;
  void retry_armed(const TableKey& table, Instant at, int failures) override;
  void not_retried(const TableKey& table, std::optional<Instant> next) override;
  void retry_after_reload(const TableKey& table) override;
  void stopping(std::size_t dropped, std::size_t running, std::chrono::seconds grace) override;
  void grace_over(std::size_t running) override;
  void abandoned(std::size_t running) override;
  void ownership(std::size_t owned, std::size_t gained, std::size_t lost, std::size_t members) override;
  void lease_lapsed() override;

 private:
  MetricsRegistry& metrics_;
};

}  // namespace tidemark
