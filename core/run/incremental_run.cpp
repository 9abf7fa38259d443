#include "core/run/incremental_run.h"

#include <cstdlib>
#include <limits>

#include "core/config/table_modes.h"
#include "core/run/change_watch.h"
#include "core/run/input_horizon.h"
#include "core/run/run_lifecycle.h"
#include "core/run/run_step.h"

namespace tidemark {

RunSummary IncrementalRun::execute(RunTrigger trigger) {
  if (table_mode(run_.table.mode).run != RunClass::IncrementalRun) std::abort();
  RunLifecycle run(run_.state, run_.ownership, run_.observer, RunLock{run_.key(), std::nullopt}, trigger);
  if (!run.open(/*wait=*/false)) return run.finish(ok_status(), run_.cancel.cancelled());
  // A snapshot's time says nothing of which rows a cursor has passed: a
  // table that was a snapshot table must not resume from it.
  const Status outcome =
      run.watermark_is_snapshot()
          ? permanent_error("the stored watermark (" + cursor_text_or_none(run.summary().watermark_before) +
                            ") is the time of a snapshot, kept from this table's life as a snapshot table, and says "
                            "nothing of which rows cursor " + run_.table.cursor +
                            " has passed: give the table a new name, which starts its state afresh")
          : run_locked(run.loaded_columns(), run.summary());
  return run.finish(outcome, run_.cancel.cancelled());
}

Result<IncrementalPlan> IncrementalRun::plan(const std::optional<std::vector<ColumnShape>>& loaded,
                                             RunSummary& summary) {
  const auto source_table = run_.source.inspect(run_.table);
  if (!source_table) return source_table.failure();
  // Before anything is read or written: a run that would load other
  // columns than the table loaded stops here (core/run/schema_drift.h),
  // a retyped cursor included.
  auto columns = check_columns(run_, *source_table, loaded, summary);
  if (!columns) return columns.failure();
  // Rows inserted once each cannot be told from rows inserted again: a
  // first run (a renamed table, a lost state) beside rows already there
  // would insert every source row a second time.
  if (table_mode(run_.table.mode).inserts_only && !summary.watermark_before && !run_.table.initial &&
      !columns->first_step.create) {
    const auto holds = run_.target.holds_rows(run_.table);
    if (!holds) return holds.failure();
    if (*holds) {
      return permanent_error("target table " + run_.table.target_table.display() + " already holds rows, and " +
                             a_mode_table(run_.table.mode) + " with no watermark yet would insert every source row "
                             "again beside them: empty it (TRUNCATE " + run_.table.target_table.quoted() +
                             "), or set initial: to the cursor value where the rows it holds end");
    }
  }
  if (watches_changes(run_.table, *source_table)) {
    if (const Status watched = watch_changes(summary); !watched) return watched.failure();
  }
  const CursorType type = source_table->cursor_type;
  if (summary.watermark_before && summary.watermark_before->type != type) {
    return permanent_error("the stored watermark is a " + std::string(cursor_type_name(summary.watermark_before->type)) +
                 " but cursor " + run_.table.cursor + " is a " + std::string(cursor_type_name(type)) +
                 "; set a new one with tidemark rewind");
  }

  WindowPlanInput input;
  input.watermark = summary.watermark_before;
  input.lookback = run_.table.lookback;
  input.max_window = run_.table.max_window;
  if (run_.table.initial) {
    const auto initial = cursor_from_text(type, *run_.table.initial);
    if (!initial) return permanent_error("initial: " + initial.error());
    input.initial = *initial;
  }
  const auto hi = safe_hi(*source_table, input.initial, summary);
  if (!hi) return hi.failure();
  input.hi = *hi;
  if (!input.watermark && !input.initial) {
    const auto lo = run_.source.lower_bound(run_.table, type);
    if (!lo) return lo.failure();
    input.source_min = *lo;
  }
  const auto windows = WindowPlan::make(input);
  if (!windows) return windows.failure();
  summary.range = windows->range();
  const bool first_step =
      columns->snapshot || columns->first_step.create || !columns->first_step.append.empty();
  return IncrementalPlan{std::move(*columns), *windows, input.initial, first_step};
}

std::optional<WatermarkMove> IncrementalRun::move_without_rows(const WindowPlan& windows,
                                                               const std::optional<CursorValue>& watermark) {
  const auto next = windows.watermark_without_chunks();
  if (!next || next == watermark) return std::nullopt;
  return WatermarkMove{watermark, *next};
}

Status IncrementalRun::run_locked(const std::optional<std::vector<ColumnShape>>& loaded, RunSummary& summary) {
  const auto planned = plan(loaded, summary);
  if (!planned) return planned.failure();
  const auto probe = run_.source.probe(run_.table, planned->columns.source, planned->windows.range());
  if (!probe) return probe.failure();
  summary.horizon.null_cursor_rows = probe->null_cursor_rows;
  summary.horizon.infinite_cursor_rows = probe->infinite_cursor_rows;
  // A range without rows moves the watermark without a chunk, the target
  // untouched, unless the first step has columns to settle, which it
  // does with its rows or without.
  // A column appended now would hold NULL for good in every row loaded
  // before it: the first chunk reads those rows again too, from the
  // lowest cursor (or the initial), and its upsert fills the column by key.
  std::optional<CursorValue> refill_from;
  if (!planned->columns.first_step.append.empty() && summary.watermark_before) {
    const auto lowest = run_.source.lower_bound(run_.table, planned->columns.source.cursor_type);
    if (!lowest) return lowest.failure();
    refill_from = *lowest;
    if (refill_from && planned->initial && *refill_from < *planned->initial) refill_from = planned->initial;
  }
  return load_chunks(planned->columns, planned->windows, /*read=*/probe->has_rows || planned->first_step,
                     refill_from, summary);
}

Status IncrementalRun::watch_changes(RunSummary& summary) {
  const auto counted = run_.source.count_changes(run_.table);
  if (!counted) return counted.failure();
  if (!*counted) return ok_status();  // the source keeps no statistics for it
  const auto previous = run_.state.last_change_count(summary.table);
  if (!previous) return previous.failure();
  summary.changes = next_change_count(*previous, **counted);
  return ok_status();
}

Result<std::optional<CursorValue>> IncrementalRun::safe_hi(const SourceTable& source_table,
                                                            const std::optional<CursorValue>& initial,
                                                            RunSummary& summary) {
  const CursorType type = source_table.cursor_type;
  // The inputs first: a standby's replay is awaited up to the primary's
  // position read with the horizon after them, so it holds every row an
  // input had committed when they were read.
  std::optional<InputLimit> limit;
  if (!run_.table.inputs.empty()) {
    if (type == CursorType::Integer) {
      return permanent_error("cursor " + run_.table.cursor +
                             " is an integer, and its inputs bound a table by time: give the table a time "
                             "cursor, or remove its inputs");
    }
    const auto read = run_.state.read_inputs(summary.table, run_.table.inputs);
    if (!read) return read.failure();
    auto least = inputs_limit(run_.table.inputs, read->inputs);
    if (!least) return least.failure();
    limit = std::move(least).value();
  }
  // Another run's reading of the source may serve if it was taken after
  // the one this table's watermark came from: an older one would make the
  // watermark look ahead of the source, the same one would find nothing new.
  std::optional<SourceMicros> shared_after;
  if (type == CursorType::TimestampTz) {
    shared_after = summary.watermark_before && summary.watermark_before->type == type
                       ? summary.watermark_before->raw + kStartReportMargin
                       : std::numeric_limits<SourceMicros>::min();
  }
  const auto reading = run_.source.read_horizon(run_.table, type, shared_after);
  if (!reading) return reading.failure();
  if (limit) {
    if (auto refused = refuse_inputs_on(*reading, run_.table)) return std::move(*refused);
  }
  HorizonInput input;
  input.type = type;
  input.reading = *reading;
  input.subscription = source_table.subscription;
  input.has_lookback = !run_.table.lookback.is_zero();
  input.takes_lookback = takes_key(run_.table.mode, "lookback");
  input.source_name = run_.pipeline.source;
  // Observations are only comparable for one table on one source.
  const std::string sampled = run_.pipeline.source + ":" + run_.table.source_table->quoted() + ":" + run_.table.cursor;
  if (type == CursorType::Integer) {
    const auto samples = run_.state.read_cursor_samples(summary.table, sampled);
    if (!samples) return samples.failure();
    input.samples = *samples;
  }
  auto decided = decide_horizon(input);
  if (!decided) return decided.failure();
  HorizonDecision decision = std::move(decided).value();
  if (type == CursorType::Integer && (decision.forget_samples_before || decision.keep_sample)) {
    const Status saved =
        run_.state.save_cursor_samples(summary.table, sampled, decision.forget_samples_before, decision.keep_sample);
    if (!saved) return saved.failure();
  }
  if (limit) summary.horizon.input_wait_seconds = hold_for_inputs(decision, *limit, reading->clock);
  // The horizon as decided, also when choosing hi from it fails.
  summary.horizon.lag_seconds = decision.lag_seconds;
  summary.horizon.held_by = decision.held_by;
  HiInput choice;
  choice.type = type;
  choice.reading = *reading;
  choice.decision = decision;
  choice.watermark = summary.watermark_before;
  choice.initial = initial;
  choice.cursor_fraction_digits = source_table.cursor_fraction_digits;
  choice.in_cursor_type = [&](SourceMicros instant) { return run_.source.cursor_at(instant, type); };
  const auto chosen = choose_hi(choice);
  if (!chosen) return chosen.failure();
  summary.horizon.lag_seconds = chosen->lag_seconds;
  summary.horizon.held_by = chosen->held_by;
  summary.horizon.watermark_ahead = chosen->watermark_ahead;
  run_.observer.on_horizon(summary.table, summary.horizon);
  // For the gauge only: an incremental table always trails its inputs,
  // which is no wait of the kind a partition held back is (its run row's).
  summary.horizon.input_wait_seconds.reset();
  return chosen->hi;
}

Status IncrementalRun::load_chunks(const ColumnPlan& columns, const WindowPlan& plan, bool read,
                                   const std::optional<CursorValue>& refill_from, RunSummary& summary) {
  std::optional<CursorValue> watermark = summary.watermark_before;
  summary.watermark_after = watermark;
  std::optional<Window> chunk;
  while (read && (chunk = plan.chunk_after(chunk))) {
    if (run_.cancel.cancelled()) return Error{run_.cancel.reason()};
    StepRecord record;
    record.lock = RunLock{summary.table, std::nullopt};
    record.run = summary.run;
    record.window = *chunk;
    record.move = WatermarkMove{watermark, plan.watermark_after(*chunk)};
    // The first chunk takes the columns along: the new ones into the
    // target, the snapshot into the state, with its rows or not at all.
    const bool first = summary.chunks == 0;
    if (first) record.loaded_columns = columns.snapshot;
    if (first && refill_from && *refill_from < record.window->lo) record.window->lo = *refill_from;
    const auto counts =
        commit_chunk(run_.target, run_.table, columns.source, record, first ? columns.first_step : TargetChanges{});
    if (!counts) return counts.failure();
    if (first) note_first_step(columns.first_step, summary);
    watermark = record.move->next;
    summary.watermark_after = watermark;
    summary.rows_read += counts->rows_read;
    summary.rows_written += counts->rows_written;
    ++summary.chunks;
    run_.observer.on_chunk_committed(summary.table, *chunk, *counts, *watermark);
  }
  if (summary.chunks == 0) {
    // No rows: the watermark may still move, and a target to create is
    // created all the same (with the loaded columns it is made from).
    const auto move = move_without_rows(plan, watermark);
    const bool create = columns.first_step.create;
    if (move || create) {
      StepRecord record;
      record.lock = RunLock{summary.table, std::nullopt};
      record.run = summary.run;
      record.move = move;
      if (create) record.loaded_columns = columns.snapshot;
      const TargetChanges changes = create ? columns.first_step : TargetChanges{};
      if (const Status committed = commit_record(run_.target, run_.table, columns.source, record, changes);
          !committed) {
        return committed;
      }
      note_first_step(changes, summary);
      if (move) summary.watermark_after = move->next;
    }
  }
  return ok_status();
}

}  // namespace tidemark
