// Where a job's start and end are told, once each: the metrics, the log,
// the state monitor in the daemon (JobEndChain holds them in order), the
// command's own output for `tidemark run` and `reconcile`. The job runner
// calls it from the worker thread the job ran on; implementations must be
// thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <vector>

#include "core/reconcile/reconcile_run.h"
#include "core/run/run_meter.h"
#include "core/run/run_observer.h"
#include "core/schedule/job_kind.h"

namespace tidemark {

// What one table's job did, whole: built once when it ends.
struct JobEnded {
  JobKind kind = JobKind::Load;
  // The job's own summary: a load's run (a partition table's firing) or
  // the reconcile's run.
  RunSummary summary;
  // The runs it closed, each counted once by the run series: a load's
  // own, each partition a firing or a reconcile wrote. A reconcile's own
  // run is not one of them: its counts are in `reconcile`.
  std::vector<RunSummary> runs;
  std::optional<ReconcileReport> reconcile;
  bool dry_run = false;  // a reconcile that wrote nothing
  std::chrono::milliseconds duration{0};
  // From the firing it served to its start; nothing for a job started by
  // hand.
  std::optional<std::chrono::duration<double>> start_delay;
  std::size_t batch_size = 1;  // loads of one pipeline run together
};

class JobEnds {
 public:
  virtual ~JobEnds() = default;
  // The job of `kind` on `table` starts (each member of a batch); `meter`
  // counts what its copies streamed and lives until its end or hand-back.
  virtual void job_started(const TableKey& /*table*/, JobKind /*kind*/, const RunMeter& /*meter*/) {}
  virtual void job_ended(const JobEnded& ended) = 0;
  // A batch hands the table back to run on its own: this job of it ends
  // without a run; the one of its own reports its end.
  virtual void job_handed_back(const TableKey& /*table*/, JobKind /*kind*/) {}
};

}  // namespace tidemark
