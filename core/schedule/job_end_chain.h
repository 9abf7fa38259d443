// The JobEnds a job's start and end go to, in the order added: the daemon
// chains the metrics, the log and the state monitor, so each job is
// reported once and in one place. Built before the first job and not
// changed after; the listeners must outlive it. Thread-safe as its
// listeners are.
#pragma once

#include <vector>

#include "core/schedule/job_ends.h"

namespace tidemark {

class JobEndChain final : public JobEnds {
 public:
  JobEndChain() = default;
  explicit JobEndChain(std::vector<JobEnds*> listeners) : listeners_(std::move(listeners)) {}

  void job_started(const TableKey& table, JobKind kind, const RunMeter& meter) override;
  void job_ended(const JobEnded& ended) override;
  void job_handed_back(const TableKey& table, JobKind kind) override;

 private:
  std::vector<JobEnds*> listeners_;
};

}  // namespace tidemark
