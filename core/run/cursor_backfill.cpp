#include "core/run/cursor_backfill.h"

#include "core/time/partition_calendar.h"
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
  RunLifecycle run(state_, observer_, RunLock{TableKey{pipeline_.name, table_.name}, std::nullopt},
                   RunTrigger::Backfill);
  const Status outcome = run.open(/*wait=*/false) ? reload(from, to, run.summary()) : ok_status();
  return run.finish(outcome, cancel_.cancelled());
}

Status CursorBackfill::reload(const std::string& from, const std::string& to, RunSummary& summary) {
  const auto source_table = source_.inspect(table_);
  if (!source_table) return source_table.failure();
  const auto lo = parse_bound(source_table->cursor_type, from, *pipeline_.zone);
  if (!lo) return permanent_error("--from: " + lo.error());
  const auto hi = parse_bound(source_table->cursor_type, to, *pipeline_.zone);
  if (!hi) return permanent_error("--to: " + hi.error());
  if (!(*lo < *hi)) return permanent_error("--from must be before --to");
  if (const Status checked = target_.check(table_, *source_table); !checked) return checked;

  WindowPlanInput input;
  input.initial = *lo;
  input.hi = *hi;
  input.max_window = table_.max_window;
  const auto plan = WindowPlan::make(input);
  if (!plan) return plan.failure();
  summary.range = plan->range();
  std::optional<Window> chunk;
  while ((chunk = plan->chunk_after(chunk))) {
    if (cancel_.cancelled()) return Error{"cancelled: the backfill was stopped before it finished"};
    // The watermark stays: the record only adds the rows to the run row.
    StepRecord record;
    record.lock = RunLock{summary.table, std::nullopt};
    record.run = summary.run;
    record.window = *chunk;
    const auto counts = commit_chunk(target_, table_, *source_table, record);
    if (!counts) return counts.failure();
    summary.rows_read += counts->rows_read;
    summary.rows_written += counts->rows_written;
    ++summary.chunks;  // not reported as a committed chunk: no watermark moved
  }
  return ok_status();
}

}  // namespace tidemark
