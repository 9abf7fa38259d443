// Runs one job of any kind (a table's load, a batch of one pipeline's
// loads, a reconcile) on the ports it takes for it (JobPorts: from the
// daemon's pool, or opened), and tells its start and its end to one
// JobEnds, once each. Holds only its configuration between jobs; one job
// per worker thread at a time, jobs on different threads are independent.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "core/config/config_model.h"
#include "core/reconcile/reconcile_run.h"
#include "core/run/cancel_token.h"
#include "core/run/run_observer.h"
#include "core/run/table_ownership.h"
#include "core/schedule/job_ends.h"
#include "daemon/serve/job_ports.h"

namespace tidemark {

// One table of a job, and why it runs.
struct JobMember {
  const TableConfig* table = nullptr;
  RunTrigger trigger = RunTrigger::Manual;
  std::optional<Instant> scheduled;  // the firing it serves, recorded in its run row
};

struct Job {
  JobKind kind = JobKind::Load;
  const PipelineConfig* pipeline = nullptr;
  // One table; several only for loads that batch (core/run/load_batch.h).
  std::vector<JobMember> members;
  ReconcileRequest reconcile;  // a reconcile's
};

class JobRunner {
 public:
  // `progress` hears each job's chunks and horizons as they come (the
  // metrics, or a command's chunk lines); `ownership` is asked once a run
  // holds its table's lock (the fleet's gate, or sole_owner() for a
  // command); `ends` hears each job's start and end; `sessions`, when
  // given (the daemon's pool), lend the sessions. All must outlive the
  // runner.
  JobRunner(std::shared_ptr<const Config> config, RunObserver& progress, const TableOwnership& ownership,
            JobEnds& ends, JobSessions sessions = {})
      : config_(std::move(config)), progress_(progress), ownership_(ownership), ends_(ends), sessions_(sessions) {}

  // Each member's end, as told to `ends`, in the members' order; nothing
  // for a member a batch handed back to run on its own (every member, when
  // a database of the batch could not be reached: a run of its own says
  // why). Never throws for database trouble: it ends up in the summaries
  // and, where the state database could be reached, the run rows.
  std::vector<std::optional<JobEnded>> run(const Job& job, const CancelToken& cancel);
  // A job of one table: its end.
  JobEnded run_one(const Job& job, const CancelToken& cancel);

  // Test hook passed to every PgTarget: throwing at a step simulates a crash.
  void set_fault_hook(std::function<void(ChunkStep)> hook) { fault_hook_ = std::move(hook); }

 private:
  // What each kind of job does on its ports; `runs` hears the run rows it
  // closes, which run() hands to the job's end.
  // Each counts what its source session streams into `meter`.
  JobEnded load(const Job& job, const CancelToken& cancel, RunObserver& runs, RunMeter& meter);
  JobEnded reconcile(const Job& job, const CancelToken& cancel, RunObserver& runs, RunMeter& meter);
  std::vector<std::optional<JobEnded>> batch(const Job& job, const CancelToken& cancel, RunObserver& runs,
                                             RunMeter& meter);
  // What every job does with its ports before it starts: the firing it
  // serves, the test hook.
  void prepare(JobPorts& ports, const JobMember& member) const;

  std::shared_ptr<const Config> config_;
  RunObserver& progress_;
  const TableOwnership& ownership_;
  JobEnds& ends_;
  JobSessions sessions_;
  std::function<void(ChunkStep)> fault_hook_;
};

// A job of one table, fired by hand or by a firing.
Job load_job(const PipelineConfig& pipeline, const TableConfig& table, RunTrigger trigger,
             std::optional<Instant> scheduled = std::nullopt);
Job reconcile_job(const PipelineConfig& pipeline, const TableConfig& table, const ReconcileRequest& request,
                  std::optional<Instant> scheduled = std::nullopt);

}  // namespace tidemark
