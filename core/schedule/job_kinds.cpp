#include "core/schedule/job_kinds.h"

#include <cstdlib>

#include "core/config/table_modes.h"

namespace tidemark {
namespace {

std::vector<JobKindSpec> build_kinds() {
  std::vector<JobKindSpec> kinds;

  JobKindSpec load;
  load.kind = JobKind::Load;
  load.word = "load";
  load.has = [](const TableConfig&) { return true; };
  load.schedule = [](const TableConfig& table) -> const CronSchedule& { return *table.schedule; };
  load.batches = true;
  load.held_lock = HeldLock::Skip;
  load.in_run_series = true;
  kinds.push_back(load);

  // `deletes: { reconcile: CRON }` on a mode that reconciles by keys or
  // partitions.
  JobKindSpec reconcile;
  reconcile.kind = JobKind::Reconcile;
  reconcile.word = "reconcile";
  reconcile.has = [](const TableConfig& table) {
    return table_mode(table.mode).reconcile != ReconcileBy::Refused && table.deletes && table.deletes->reconcile;
  };
  reconcile.schedule = [](const TableConfig& table) -> const CronSchedule& { return *table.deletes->reconcile; };
  reconcile.batches = false;
  // A load holds the lock for a while: a reconcile does not wait on a
  // worker for it, and comes back after the backoff rather than a day later.
  reconcile.held_lock = HeldLock::RetryAfterBackoff;
  reconcile.in_run_series = false;
  reconcile.records_trigger = RunTrigger::Reconcile;
  kinds.push_back(reconcile);

  for (std::size_t i = 0; i < kinds.size(); ++i) {
    if (static_cast<std::size_t>(kinds[i].kind) != i) std::abort();  // rows in the order of JobKind
  }
  return kinds;
}

}  // namespace

const std::vector<JobKindSpec>& job_kinds() {
  static const std::vector<JobKindSpec> kinds = build_kinds();
  return kinds;
}

const JobKindSpec& job_kind(JobKind kind) { return job_kinds().at(static_cast<std::size_t>(kind)); }

std::optional<JobKind> job_kind_named(std::string_view word) {
  for (const JobKindSpec& spec : job_kinds()) {
    if (spec.word == word) return spec.kind;
  }
  return std::nullopt;
}

JobKind job_kind_of(RunTrigger trigger) {
  for (const JobKindSpec& spec : job_kinds()) {
    if (spec.records_trigger == trigger) return spec.kind;
  }
  return JobKind::Load;
}

}  // namespace tidemark
