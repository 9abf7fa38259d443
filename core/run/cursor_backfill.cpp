#include "core/run/cursor_backfill.h"

#include "core/time/partition_calendar.h"
#include "core/run/input_horizon.h"
#include "core/run/run_lifecycle.h"
#include "core/run/run_step.h"
#include "core/watermark/window_plan.h"

namespace tidemark {
namespace {

Result<CursorValue> parse_bound(CursorType type, const std::string& text, const TimeZone& zone) {
  if (type != CursorType::TimestampTz) return cursor_from_text(type, text);
  const auto instant = parse_time_in_zone(text, zone);
  if (!instant) return instant.failure();
  return CursorValue{type, std::chrono::duration_cast<std::chrono::microseconds>(instant->time_since_epoch()).count()};
}

}  // namespace

RunSummary CursorBackfill::execute(const std::string& from, const std::string& to) {
  RunLifecycle run(run_.state, run_.ownership, run_.observer, RunLock{run_.key(), std::nullopt},
                   RunTrigger::Backfill);
  const Status outcome =
      run.open(/*wait=*/false) ? reload(from, to, run.loaded_columns(), run.summary()) : ok_status();
  const RunSummary summary = run.finish(outcome, run_.cancel.cancelled());
  // Also after a failure: what its committed chunks wrote was flagged.
  announce_if_written(run_.table, summary.table, summary.rows_written > 0, run_.state);
  return summary;
}

Status CursorBackfill::reload(const std::string& from, const std::string& to,
                              const std::optional<std::vector<ColumnShape>>& loaded, RunSummary& summary) {
  const auto source_table = run_.source.inspect(run_.table);
  if (!source_table) return source_table.failure();
  const auto lo = parse_bound(source_table->cursor_type, from, *run_.pipeline.zone);
  if (!lo) return permanent_error("--from: " + lo.error());
  const auto hi = parse_bound(source_table->cursor_type, to, *run_.pipeline.zone);
  if (!hi) return permanent_error("--to: " + hi.error());
  if (!(*lo < *hi)) return permanent_error("--from must be before --to");
  // A backfill loads through the same columns as a run, and stops on the
  // same drift (core/run/schema_drift.h).
  const auto columns = check_columns(run_, *source_table, loaded, summary);
  if (!columns) return columns.failure();

  WindowPlanInput input;
  input.initial = *lo;
  input.hi = *hi;
  input.max_window = run_.table.max_window;
  const auto plan = WindowPlan::make(input);
  if (!plan) return plan.failure();
  summary.range = plan->range();
  // Rows copied again below the watermark may change what the dependents'
  // done partitions read, and which of them read the rows the cursor does
  // not tell: all are flagged, by every chunk, in its transaction (a check
  // between two chunks would clear a flag set once by the first).
  const auto recheck = downstream_recheck(run_.pipeline, run_.table, kCalendarStart,
                                          "backfilled from " + from + " to " + to);
  std::optional<Window> chunk;
  while ((chunk = plan->chunk_after(chunk))) {
    if (run_.cancel.cancelled()) return Error{"cancelled: the backfill was stopped before it finished"};
    // The watermark stays: the record only adds the rows to the run row.
    StepRecord record;
    record.lock = RunLock{summary.table, std::nullopt};
    record.run = summary.run;
    record.window = *chunk;
    record.recheck = recheck;
    const bool first = summary.chunks == 0;
    if (first) record.loaded_columns = columns->snapshot;
    const auto counts =
        commit_chunk(run_.target, run_.table, columns->source, record, first ? columns->first_step : TargetChanges{});
    if (!counts) return counts.failure();
    if (first) note_first_step(columns->first_step, summary);
    summary.rows_read += counts->rows_read;
    summary.rows_written += counts->rows_written;
    ++summary.chunks;  // not reported as a committed chunk: no watermark moved
  }
  return ok_status();
}

}  // namespace tidemark
