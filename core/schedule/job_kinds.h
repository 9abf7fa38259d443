// The kinds of job a table has, one row each: the word its run rows carry,
// which tables have it, the schedule it fires on, whether its firings
// batch, what a held table lock means for it and how its runs start. The
// scheduler, the run rows and the launcher read this table instead of
// telling the kinds apart themselves. Constant rows built once on first
// use; thread-safe.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "core/config/config_model.h"
#include "core/run/run_ports.h"
#include "core/schedule/job_kind.h"

namespace tidemark {

// What a run of a job does when another holds the table's advisory lock.
enum class HeldLock {
  // It skips: the holder is this job on another member, whose run decides.
  Skip,
  // It comes back after the failure backoff: the holder is the table's
  // other job, and this one is too rare to wait for its next firing.
  RetryAfterBackoff,
};

struct JobKindSpec {
  JobKind kind = JobKind::Load;
  std::string_view word;  // tidemark.runs.kind
  // Whether `table` has a job of this kind.
  bool (*has)(const TableConfig& table) = nullptr;
  // The schedule its firings follow; only asked of a table that has it.
  const CronSchedule& (*schedule)(const TableConfig& table) = nullptr;
  // Its firings may join a batch of loads (core/run/load_batch.h), where
  // the table's mode and lookback allow.
  bool batches = false;
  HeldLock held_lock = HeldLock::Skip;
  // Its runs are the run series' (tidemark_runs_total, durations, start
  // delays, in progress); a reconcile has series of its own.
  bool in_run_series = false;
  // The trigger every run of it records, whatever fired it; none: the
  // run records why it fired (a schedule, a retry, an input, ...).
  std::optional<RunTrigger> records_trigger;
};

// Every kind, in the order of JobKind.
const std::vector<JobKindSpec>& job_kinds();
const JobKindSpec& job_kind(JobKind kind);

// The kind a run row's word names; nothing for a word no kind has.
std::optional<JobKind> job_kind_named(std::string_view word);

// The kind of job a run of `trigger` belongs to: the kind that records
// it, else a load (whose runs record why they fired).
JobKind job_kind_of(RunTrigger trigger);

}  // namespace tidemark
