// Runs one table once: takes the ports the run needs (JobPorts: the
// state, the source, and the target unless it is the state database, from
// a pool or opened), carries out the run, logs it and gives the sessions
// back. Stateless
// between runs apart from its configuration; one call per worker thread at
// a time, calls on different threads are independent.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "core/reconcile/reconcile_run.h"
#include "core/run/cancel_token.h"
#include "core/run/load_batch.h"
#include "core/config/config_model.h"
#include "core/run/run_observer.h"
#include "core/run/table_ownership.h"
#include "daemon/serve/job_ports.h"

namespace tidemark {

struct TimedSummary {
  RunSummary summary;
  std::chrono::milliseconds duration{0};
};

class TableRunner {
 public:
  // `observer` receives every chunk and run (metrics). `ownership` is
  // asked once a run holds its table's lock (RunLifecycle::open): the
  // fleet's gate in the daemon, sole_owner() for a command. `sessions`,
  // when given (the daemon's pool), lend the sessions. All must outlive
  // the runner.
  TableRunner(std::shared_ptr<const Config> config, RunObserver& observer, const TableOwnership& ownership,
              JobSessions sessions = {})
      : config_(std::move(config)), observer_(observer), ownership_(ownership), sessions_(sessions) {}

  // An incremental run, or a partition table's due partitions. Never throws for database trouble:
  // it ends up in the summary (and in the run row when the state database
  // could be reached).
  TimedSummary run(const PipelineConfig& pipeline, const TableConfig& table, RunTrigger trigger,
                   const CancelToken& cancel);

  // The loads of one pipeline's incremental tables fired together, as a
  // batch (core/run/load_batch.h): for each member, in order, its run's
  // summary, logged, with the batch's duration; or nothing: it is to run
  // on its own, with run() (also when a database could not be reached:
  // a run of its own records that).
  std::vector<std::optional<TimedSummary>> run_batch(const PipelineConfig& pipeline,
                                                     const std::vector<BatchMember>& members,
                                                     const CancelToken& cancel);

  // A reconcile of an incremental table (core/reconcile/reconcile_run.h),
  // or of a partition table (core/reconcile/partition_repair.h), on the
  // same sessions a run takes. Never throws for database trouble: it ends
  // up in the report (and the run rows when there are).
  ReconcileReport reconcile(const PipelineConfig& pipeline, const TableConfig& table, const ReconcileRequest& request,
                            const CancelToken& cancel);

  // Whether each finished run is logged (the daemon) or left to the caller
  // to print (`tidemark run`). Default: logged.
  void set_log_runs(bool log_runs) { log_runs_ = log_runs; }

  // The firing the runs serve, recorded in their run rows (PgStateStore::set_firing).
  void set_firing(Instant scheduled) { firing_ = scheduled; }

  // Test hook passed to every PgTarget: throwing at a step simulates a crash.
  void set_fault_hook(std::function<void(ChunkStep)> hook) { fault_hook_ = std::move(hook); }

 private:
  // What every job kind does with its ports before it starts: the firing
  // it serves, the test hook.
  void prepare(JobPorts& ports) const;

  std::shared_ptr<const Config> config_;
  RunObserver& observer_;
  const TableOwnership& ownership_;
  JobSessions sessions_;
  std::function<void(ChunkStep)> fault_hook_;
  std::optional<Instant> firing_;
  bool log_runs_ = true;
};

// One log line for a finished run: old and new watermark, window, rows, duration.
std::string describe_run(const TimedSummary& run);

// One log line for a finished reconcile: its counts, buckets and keys read.
std::string describe_reconcile(const ReconcileReport& report, bool dry_run);

}  // namespace tidemark
