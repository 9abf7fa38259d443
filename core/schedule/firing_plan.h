// Decides when a table fires: its next firing, whether firings were missed
// while the daemon was down, and when a failed run is retried. Pure: it is
// given the time and returns decisions; it never sleeps, reads a clock or
// touches a database. Thread-safe.
#pragma once

#include <chrono>
#include <optional>

#include "core/config/config_model.h"
#include "core/schedule/job_kind.h"
#include "core/time/time_types.h"

namespace tidemark {

// The schedule of one of the table's jobs: its load's, or its reconcile's
// (requires deletes: for JobKind::Reconcile).
const CronSchedule& job_schedule(const TableConfig& table, JobKind kind);

// The job's next firing strictly after `after`, in its pipeline's zone.
std::optional<Instant> next_firing(const PipelineConfig& pipeline, const TableConfig& table, Instant after,
                                   JobKind kind = JobKind::Load);

// True when at least one firing of the job fell in (last_started, now]: it
// runs once at start-up, not once per missed firing. A job that has never
// run (no last_started) waits for its first firing.
bool missed_firing(const PipelineConfig& pipeline, const TableConfig& table, std::optional<Instant> last_started,
                   Instant now, JobKind kind = JobKind::Load);

// The wait after `failures` consecutive failed runs (failures >= 1):
// 10 s, doubling, at most 5 min.
std::chrono::seconds retry_backoff(int failures);

// When to try a failing table again: after the backoff, but never later
// than its next regular firing.
Instant retry_at(Instant failed_at, int failures, std::optional<Instant> next_regular_firing);

}  // namespace tidemark
