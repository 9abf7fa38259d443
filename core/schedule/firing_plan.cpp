#include "core/schedule/firing_plan.h"

#include <algorithm>
#include <cstdlib>

#include "core/schedule/job_kinds.h"

namespace tidemark {

const CronSchedule& job_schedule(const TableConfig& table, JobKind kind) {
  const JobKindSpec& spec = job_kind(kind);
  if (!spec.has(table)) std::abort();  // no such job
  return spec.schedule(table);
}

std::optional<Instant> next_firing(const PipelineConfig& pipeline, const TableConfig& table, Instant after,
                                   JobKind kind) {
  return job_schedule(table, kind).next_after(after, *pipeline.zone);
}

bool missed_firing(const PipelineConfig& pipeline, const TableConfig& table, std::optional<Instant> last_started,
                   Instant now, JobKind kind) {
  if (!last_started) return false;
  const auto next = next_firing(pipeline, table, *last_started, kind);
  return next && *next <= now;
}

std::chrono::seconds retry_backoff(int failures) {
  constexpr std::chrono::seconds kFirst{10};
  constexpr std::chrono::seconds kMax{300};
  std::chrono::seconds wait = kFirst;
  for (int i = 1; i < failures && wait < kMax; ++i) wait *= 2;
  return std::min(wait, kMax);
}

Instant retry_at(Instant failed_at, int failures, std::optional<Instant> next_regular_firing) {
  const Instant backoff = failed_at + retry_backoff(failures);
  return next_regular_firing ? std::min(backoff, *next_regular_firing) : backoff;
}

}  // namespace tidemark
