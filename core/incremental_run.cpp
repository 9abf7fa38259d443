#include "core/incremental_run.h"

#include <cstdlib>

namespace tidemark {
namespace {

constexpr const char* kCancelled = "cancelled: the run was stopped before it finished";

}  // namespace

RunSummary IncrementalRun::execute(RunTrigger trigger) {
  if (table_.mode != TableMode::Incremental) std::abort();
  RunSummary summary;
  summary.table = TableKey{pipeline_.name, table_.name};
  if (lock_taken(state_.try_lock(summary.table), "table", summary)) {
    run_locked(trigger, summary);
    state_.unlock(summary.table);
  }
  observer_.on_run_finished(summary);
  return summary;
}

void IncrementalRun::run_locked(RunTrigger trigger, RunSummary& summary) {
  const TableKey& key = summary.table;
  const auto fail = [&](const std::string& error) {
    summary.status = RunStatus::Failed;
    summary.error = error;
  };

  if (const auto abandoned = state_.fail_abandoned_runs(key, std::nullopt); !abandoned) return fail(abandoned.error());
  const auto stored = state_.read_watermark(key);
  if (!stored) return fail(stored.error());
  if (*stored) summary.watermark_before = (*stored)->value;
  summary.watermark_after = summary.watermark_before;  // until a chunk commits

  const auto run = state_.start_run(RunStart{key, trigger, summary.watermark_before, std::nullopt});
  if (!run) return fail(run.error());
  summary.run = *run;

  const Status loaded = [&]() -> Status {
    const auto source_table = source_.inspect(table_);
    if (!source_table) return Error{source_table.error()};
    const CursorType type = source_table->cursor_type;
    if (summary.watermark_before && summary.watermark_before->type != type) {
      return Error{"the stored watermark is a " + std::string(cursor_type_name(summary.watermark_before->type)) +
                   " but cursor " + table_.cursor + " is a " + std::string(cursor_type_name(type)) +
                   "; set a new one with tidemark rewind"};
    }
    if (const Status checked = target_.check(table_, *source_table); !checked) return checked;

    WindowPlanInput input;
    input.watermark = summary.watermark_before;
    input.lookback = table_.lookback;
    input.max_window = table_.max_window;
    if (table_.initial) {
      const auto initial = cursor_from_text(type, *table_.initial);
      if (!initial) return Error{"initial: " + initial.error()};
      input.initial = *initial;
    }
    const auto hi = source_.upper_bound(table_, type);
    if (!hi) return Error{hi.error()};
    input.hi = *hi;
    if (!input.watermark && !input.initial) {
      const auto lo = source_.lower_bound(table_, type);
      if (!lo) return Error{lo.error()};
      input.source_min = *lo;
    }
    const auto plan = WindowPlan::make(input);
    if (!plan) return Error{plan.error()};
    summary.range = plan->range();
    return load_chunks(*source_table, *plan, summary);
  }();

  conclude(summary, loaded, cancel_.cancelled());
  if (const Status recorded = state_.finish_run(summary.run, run_end(summary)); !recorded && loaded) {
    // The data and watermark are committed; only the run row is stale.
    summary.error = "the run succeeded but its run row could not be updated: " + recorded.error();
  }
}

Status IncrementalRun::load_chunks(const SourceTable& source_table, const WindowPlan& plan, RunSummary& summary) {
  std::optional<CursorValue> watermark = summary.watermark_before;
  summary.watermark_after = watermark;
  std::optional<Window> chunk;
  while ((chunk = plan.chunk_after(chunk))) {
    if (cancel_.cancelled()) return Error{kCancelled};
    ChunkRequest request{summary.table, summary.run, *chunk, watermark, plan.watermark_after(*chunk), true};
    const auto counts = target_.load_chunk(table_, source_table, request);
    if (!counts) return Error{counts.error()};
    watermark = request.watermark_after;
    summary.watermark_after = watermark;
    summary.rows_read += counts->rows_read;
    summary.rows_written += counts->rows_written;
    ++summary.chunks;
    observer_.on_chunk_committed(summary.table, *chunk, *counts, *watermark);
  }
  if (summary.chunks == 0) {
    const auto next = plan.watermark_without_chunks();
    if (next && next != watermark) {
      if (const Status moved = state_.move_watermark(summary.table, summary.run, watermark, *next); !moved) {
        return moved;
      }
      summary.watermark_after = next;
    }
  }
  return ok_status();
}

}  // namespace tidemark
