// The daemon's log line for each job that ends (a JobEnds of the chain),
// and the words of that line, which `tidemark run` and `reconcile` print
// as their output. Stateless; thread-safe.
#pragma once

#include <chrono>
#include <string>

#include "core/reconcile/reconcile_run.h"
#include "core/schedule/job_ends.h"

namespace tidemark {

class JobLog final : public JobEnds {
 public:
  // One line a job, at error level when it failed.
  void job_ended(const JobEnded& ended) override;
};

// A job's line: a load's run, or a reconcile's counts, and how long it took.
std::string describe_job(const JobEnded& ended);

// One line for a finished run: old and new watermark, window, rows, duration.
std::string describe_run(const RunSummary& summary, std::chrono::milliseconds duration);

// One line for a finished reconcile: its counts, buckets and keys read.
std::string describe_reconcile(const ReconcileReport& report, bool dry_run);

}  // namespace tidemark
