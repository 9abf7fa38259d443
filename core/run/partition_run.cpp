#include "core/run/partition_run.h"

#include <limits>
#include <map>
#include <optional>

#include "core/run/input_horizon.h"
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
  void on_horizon(const TableKey& table, const HorizonReport& horizon) override { inner_.on_horizon(table, horizon); }
  void on_run_finished(const RunSummary& summary) override {
    if (!summary.range && summary.status != RunStatus::Success) inner_.on_run_finished(summary);
  }

 private:
  RunObserver& inner_;
};

Instant second_of(SourceMicros micros) {
  return Instant(std::chrono::floor<std::chrono::seconds>(std::chrono::microseconds(micros)));
}

}  // namespace

Result<PartitionHorizon> partition_horizon(Source& source, StateStore& state, const TableKey& key,
                                           const TableConfig& table, HorizonReport& report) {
  // The inputs first: a standby's replay is awaited up to the primary's
  // position read with the horizon after them, so it holds every row an
  // input had committed when they were read.
  PartitionHorizon out;
  std::optional<InputLimit> limit;
  if (!table.inputs.empty()) {
    const auto read = state.read_inputs(key, table.inputs);
    if (!read) return read.failure();
    auto least = inputs_limit(table.inputs, read->inputs);
    if (!least) return least.failure();
    limit = std::move(least).value();
    out.input_changes = read->changes;
  }
  // Any recent reading serves: a partition is due once its end is below it.
  const auto reading = source.read_horizon(table, CursorType::TimestampTz, std::numeric_limits<SourceMicros>::min());
  if (!reading) return reading.failure();
  if (limit) {
    if (const auto refused = refuse_inputs_on(*reading, table)) return *refused;
  }
  HorizonInput input;
  input.type = CursorType::TimestampTz;
  input.reading = *reading;
  input.has_lookback = true;  // no refusal: partitions are replaced whole by a backfill
  auto decided = decide_horizon(input);
  if (!decided) return decided.failure();
  HorizonDecision decision = std::move(decided).value();
  out.clock = second_of(reading->clock - kStartReportMargin);
  if (!decision.hold_at_watermark && decision.instant) out.by_source = second_of(*decision.instant);
  if (limit) report.input_wait_seconds = hold_for_inputs(decision, *limit, reading->clock);
  report.lag_seconds = decision.lag_seconds;
  report.held_by = decision.held_by;
  if (!decision.hold_at_watermark && decision.instant) out.complete_before = second_of(*decision.instant);
  return out;
}

RunSummary PartitionRun::execute(RunTrigger trigger) {
  // The table's lock only orders firings; each partition is a run of its
  // own (PartitionWriter), with its row and its report.
  FiringObserver heard(run_.observer);
  RunLifecycle firing(run_.state, run_.ownership, heard, RunLock{run_.key(), std::nullopt}, trigger, RunRow::None);
  firing.summary().partitions = true;
  const Status outcome = firing.open(/*wait=*/false) ? fire(trigger, firing.summary()) : ok_status();
  return firing.finish(outcome, run_.cancel.cancelled());
}

Status PartitionRun::fire(RunTrigger trigger, RunSummary& summary) {
  // The flags before the inputs: a flag set after this read was counted
  // after it too, and waits for the next firing (it is not cleared here).
  std::vector<FlaggedPartition> flags;
  if (!run_.table.inputs.empty()) {
    auto flagged = run_.state.flagged_partitions(summary.table);
    if (!flagged) return flagged.failure();
    flags = std::move(flagged).value();
  }
  const auto horizon = partition_horizon(run_.source, run_.state, summary.table, run_.table, summary.horizon);
  if (!horizon) return horizon.failure();
  std::optional<Instant> initial;
  if (run_.table.initial) {
    const auto parsed = parse_time_in_zone(*run_.table.initial, *run_.pipeline.zone);
    if (!parsed) return permanent_error("initial: " + parsed.error());
    initial = *parsed;
  }
  const auto read_last_done = run_.state.last_done_partition(summary.table);
  if (!read_last_done) return read_last_done.failure();
  std::optional<Instant> last_done = *read_last_done;
  if (horizon->complete_before) {
    std::set<Instant> written;
    for (const TimeWindow& partition : plan_scheduled_partitions(last_done, initial, *horizon->complete_before,
                                                                 run_.table.partition->unit, *run_.pipeline.zone)) {
      const auto went_on = write(partition, trigger, {"", horizon->input_changes}, summary);
      if (!went_on) return went_on.failure();
      if (!*went_on) return ok_status();  // a backfill is writing it; the next firing goes on
      written.insert(partition.lo);
      last_done = partition.hi;
    }
    if (const Status checked = recheck(trigger, *horizon, written, flags, summary); !checked) return checked;
  }
  return record_hold(trigger, *horizon, last_done, initial, summary);
}

Result<bool> PartitionRun::write(const TimeWindow& partition, RunTrigger trigger, const PartitionWriter::Why& why,
                                 RunSummary& summary) {
  if (run_.cancel.cancelled()) return Error{run_.cancel.reason()};
  const std::string& rewrite_reason = why.rewrite_reason;
  const RunSummary one = writer_.write(partition, trigger, /*wait=*/false, why);
  if (one.status == RunStatus::SkippedLocked) return false;
  // Rewrites come after the new partitions but lie before them.
  if (!summary.range) {
    summary.range = one.range;
  } else {
    if (one.range->lo < summary.range->lo) summary.range->lo = one.range->lo;
    if (summary.range->hi < one.range->hi) summary.range->hi = one.range->hi;
  }
  summary.run = one.run;
  summary.rows_read += one.rows_read;
  summary.rows_written += one.rows_written;
  if (one.status != RunStatus::Success) return Error{one.error, one.error_kind};
  // A partition written whose run row could not be closed: say so.
  if (!one.error.empty()) summary.error += (summary.error.empty() ? "" : "; ") + one.error;
  if (!rewrite_reason.empty()) {
    summary.rewrite_reason += (summary.rewrite_reason.empty() ? "" : "; ") +
                              partition_label(partition, run_.table.partition->unit, *run_.pipeline.zone) + " " +
                              rewrite_reason;
  }
  ++summary.chunks;
  return true;
}

Status PartitionRun::recheck(RunTrigger trigger, const PartitionHorizon& horizon, const std::set<Instant>& written,
                             const std::vector<FlaggedPartition>& flags, RunSummary& summary) {
  const Instant complete_before = *horizon.complete_before;
  const PartitionUnit unit = run_.table.partition->unit;
  const TimeZone& zone = *run_.pipeline.zone;
  std::map<Instant, std::string> checked;  // partition lo -> why it is checked
  std::map<Instant, const FlaggedPartition*> flagged;
  // A firing an input woke checks what it flagged, not the lookback: the
  // lookback is the schedule's, or an input moving every minute would run
  // the lookback's queries every minute.
  if (!run_.table.lookback.is_zero() && trigger != RunTrigger::Input) {
    const TimeWindow newest = last_complete_partition(complete_before, unit, zone);
    const Instant from = lookback_start(newest, std::chrono::seconds(run_.table.lookback.amount), unit, zone);
    const auto done = run_.state.done_partitions(summary.table, from, newest.hi);
    if (!done) return done.failure();
    for (const Instant lo : *done) checked[lo] = "lookback";
  }
  for (const FlaggedPartition& f : flags) {
    if (f.window.hi > complete_before) continue;  // its inputs have not passed it again yet
    checked[f.window.lo] = f.because;
    flagged[f.window.lo] = &f;
  }
  for (const auto& [lo, because] : checked) {
    if (written.count(lo)) continue;  // written from its query a moment ago
    if (run_.cancel.cancelled()) return Error{run_.cancel.reason()};
    const TimeWindow partition = partition_containing(lo, unit, zone);
    const auto compared = run_.target.compare_partition(
        run_.table, partition_request(summary.table, 0, partition, zone, unit));
    if (!compared) return compared.failure();
    if (compared->equal()) {
      const auto flag = flagged.find(lo);
      if (flag != flagged.end()) {
        if (const Status cleared = run_.state.clear_flag(summary.table, *flag->second); !cleared) return cleared;
      }
      continue;
    }
    const auto went_on =
        write(partition, trigger, {because + ": " + compared->difference(), horizon.input_changes}, summary);
    if (!went_on) return went_on.failure();
    // A backfill is writing it from the query now; the others go on.
  }
  return ok_status();
}

Status PartitionRun::record_hold(RunTrigger trigger, const PartitionHorizon& horizon,
                                 std::optional<Instant> last_done, std::optional<Instant> initial,
                                 RunSummary& summary) {
  HorizonReport& report = summary.horizon;
  // The first partition the calendar has completed and nothing has written.
  const auto due =
      plan_scheduled_partitions(last_done, initial, horizon.clock, run_.table.partition->unit, *run_.pipeline.zone);
  // (The report margin alone, a second past midnight, names no holder.)
  const bool held = !due.empty() && (!horizon.complete_before || due.front().hi > *horizon.complete_before) &&
                    !report.held_by.empty();
  if (!held) {
    // Nothing complete waits: whatever held the horizon held back only the
    // partition being filled, as the calendar does.
    report.held_by.clear();
    report.input_wait_seconds.reset();
    run_.observer.on_horizon(summary.table, report);
    return ok_status();
  }
  // How long ago the source alone would have let it be written.
  if (report.input_wait_seconds && horizon.by_source && due.front().hi <= *horizon.by_source) {
    report.input_wait_seconds = static_cast<double>((*horizon.by_source - due.front().hi).count());
  } else {
    report.input_wait_seconds.reset();
  }
  run_.observer.on_horizon(summary.table, report);
  RunEnd end;
  end.success = true;
  end.horizon = report;
  const auto recorded = run_.state.record_run(RunStart{summary.table, trigger, std::nullopt}, end);
  if (!recorded) return recorded.failure();
  if (summary.run == 0) summary.run = *recorded;
  return ok_status();
}

}  // namespace tidemark
