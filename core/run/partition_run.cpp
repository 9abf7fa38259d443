#include "core/run/partition_run.h"

#include <limits>

#include "core/run/run_lifecycle.h"
#include "core/watermark/partition_plan.h"

namespace tidemark {
namespace {

// A firing's report: its partitions are its runs, each reported as it
// ends, so the firing's own end is heard only when it did not succeed and
// no partition ran (its range is theirs): skipped, or failed before the
// first.
class FiringObserver final : public RunObserver {
 public:
  explicit FiringObserver(RunObserver& inner) : inner_(inner) {}
  void on_chunk_committed(const TableKey& table, const Window& window, const ChunkCounts& counts,
                          const CursorValue& watermark) override {
    inner_.on_chunk_committed(table, window, counts, watermark);
  }
  void on_run_finished(const RunSummary& summary) override {
    if (!summary.range && summary.status != RunStatus::Success) inner_.on_run_finished(summary);
  }

 private:
  RunObserver& inner_;
};

}  // namespace

Result<std::optional<Instant>> partitions_complete_before(Source& source, const TableConfig& table,
                                                          HorizonReport& report) {
  // Any recent reading serves: a partition is due once its end is below it.
  const auto reading = source.read_horizon(table, CursorType::TimestampTz, std::numeric_limits<SourceMicros>::min());
  if (!reading) return reading.failure();
  HorizonInput input;
  input.type = CursorType::TimestampTz;
  input.reading = *reading;
  input.has_lookback = true;  // no refusal: partitions are replaced whole by a backfill
  const auto decision = decide_horizon(input);
  if (!decision) return decision.failure();
  report.lag_seconds = decision->lag_seconds;
  report.held_by = decision->held_by;
  if (decision->hold_at_watermark || !decision->instant) return std::optional<Instant>();
  const auto seconds = std::chrono::floor<std::chrono::seconds>(std::chrono::microseconds(*decision->instant));
  return std::optional<Instant>(Instant(seconds));
}

RunSummary PartitionRun::execute(RunTrigger trigger) {
  // The table's lock only orders firings; each partition is a run of its
  // own (PartitionWriter), with its row and its report.
  FiringObserver heard(run_.observer);
  RunLifecycle firing(run_.state, run_.ownership, heard, RunLock{run_.key(), std::nullopt}, trigger, RunRow::None);
  firing.summary().partitions = true;
  const Status outcome = firing.open(/*wait=*/false) ? write_due_partitions(trigger, firing.summary()) : ok_status();
  return firing.finish(outcome, run_.cancel.cancelled());
}

Status PartitionRun::write_due_partitions(RunTrigger trigger, RunSummary& summary) {
  const auto now = partitions_complete_before(run_.source, run_.table, summary.horizon);
  if (!now) return now.failure();
  if (!*now) return ok_status();  // a prepared transaction holds every partition back
  const auto last_done = run_.state.last_done_partition(summary.table);
  if (!last_done) return last_done.failure();
  std::optional<Instant> initial;
  if (run_.table.initial) {
    const auto parsed = parse_time_in_zone(*run_.table.initial, *run_.pipeline.zone);
    if (!parsed) return permanent_error("initial: " + parsed.error());
    initial = *parsed;
  }
  const PartitionUnit unit = run_.table.partition->unit;
  for (const TimeWindow& partition : plan_scheduled_partitions(*last_done, initial, **now, unit, *run_.pipeline.zone)) {
    if (run_.cancel.cancelled()) return Error{run_.cancel.reason()};
    const RunSummary one = writer_.write(partition, trigger, /*wait=*/false);
    if (one.status == RunStatus::SkippedLocked) break;  // a backfill is writing it; the next firing goes on
    if (!summary.range) summary.range = one.range;
    summary.range->hi = one.range->hi;
    summary.run = one.run;
    summary.rows_read += one.rows_read;
    summary.rows_written += one.rows_written;
    if (one.status != RunStatus::Success) return Error{one.error, one.error_kind};
    // A partition written whose run row could not be closed: say so.
    if (!one.error.empty()) summary.error += (summary.error.empty() ? "" : "; ") + one.error;
    ++summary.chunks;
  }
  return ok_status();
}

}  // namespace tidemark
