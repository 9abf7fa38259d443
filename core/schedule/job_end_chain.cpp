#include "core/schedule/job_end_chain.h"

namespace tidemark {

void JobEndChain::job_started(const TableKey& table, JobKind kind, const RunMeter& meter) {
  for (JobEnds* listener : listeners_) listener->job_started(table, kind, meter);
}

void JobEndChain::job_ended(const JobEnded& ended) {
  for (JobEnds* listener : listeners_) listener->job_ended(ended);
}

void JobEndChain::job_handed_back(const TableKey& table, JobKind kind) {
  for (JobEnds* listener : listeners_) listener->job_handed_back(table, kind);
}

}  // namespace tidemark
