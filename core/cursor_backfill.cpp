#include "core/cursor_backfill.h"

#include "core/partition_calendar.h"
#include "core/window_plan.h"

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
  RunSummary summary;
  summary.table = TableKey{pipeline_.name, table_.name};
  if (lock_taken(state_.try_lock(summary.table), "table", summary)) {
    conclude(summary, reload(from, to, summary), cancel_.cancelled());
    if (summary.run != 0) state_.finish_run(summary.run, run_end(summary));
    state_.unlock(summary.table);
  }
  observer_.on_run_finished(summary);
  return summary;
}

Status CursorBackfill::reload(const std::string& from, const std::string& to, RunSummary& summary) {
  const auto run = state_.start_run(RunStart{summary.table, RunTrigger::Backfill, std::nullopt, std::nullopt});
  if (!run) return run.failure();
  summary.run = *run;
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
    const ChunkRequest request{summary.table, summary.run, *chunk, std::nullopt, chunk->hi, /*move_watermark=*/false};
    const auto counts = target_.load_chunk(table_, *source_table, request);
    if (!counts) return counts.failure();
    summary.rows_read += counts->rows_read;
    summary.rows_written += counts->rows_written;
    ++summary.chunks;  // not reported as a committed chunk: no watermark moved
  }
  return ok_status();
}

}  // namespace tidemark
