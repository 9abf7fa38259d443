#include "core/run/snapshot_run.h"

#include <cstdlib>

#include "core/run/column_check.h"
#include "core/run/run_lifecycle.h"
#include "core/run/run_step.h"

namespace tidemark {

std::string snapshot_path_text(const SnapshotWrite& write) {
  const RowDiffCounts& d = write.diff;
  switch (write.path) {
    case SnapshotPath::Unchanged: return "unchanged";
    case SnapshotPath::Recent:
      return "diff of the rows written since the last snapshot: " + std::to_string(d.changed) + " changed, " +
             std::to_string(d.missing) + " missing, " + std::to_string(d.gone) + " gone";
    case SnapshotPath::Diffed:
      return "diff: " + std::to_string(d.changed) + " changed, " + std::to_string(d.missing) + " missing, " +
             std::to_string(d.gone) + " gone";
    case SnapshotPath::Whole: break;
  }
  return write.whole_because.empty() ? "whole" : "whole: " + write.whole_because;
}

RunSummary SnapshotRun::execute(RunTrigger trigger) {
  if (run_.table.mode != TableMode::Snapshot) std::abort();
  RunLifecycle run(run_.state, run_.ownership, run_.observer, RunLock{run_.key(), std::nullopt}, trigger);
  const Status outcome = run.open(/*wait=*/false)
                             ? run_locked(run.loaded_columns(), run.snapshot_horizon(), run.watermark_is_snapshot(),
                                          run.summary())
                             : ok_status();
  return run.finish(outcome, run_.cancel.cancelled());
}

Status SnapshotRun::run_locked(const std::optional<std::vector<ColumnShape>>& loaded,
                               const std::optional<SnapshotHorizon>& since, bool snapshot_watermark,
                               RunSummary& summary) {
  // A cursor's watermark, left by an earlier mode of this table: the
  // compare-and-set keeps a watermark's kind, and a cursor value is no
  // snapshot's time.
  if (summary.watermark_before && !snapshot_watermark) {
    return permanent_error("the stored watermark (" + cursor_to_text(*summary.watermark_before) +
                           ") is a cursor's, kept from an earlier mode of this table; a snapshot table's watermark is "
                           "the time of its last snapshot: give the table a new name, which starts its state afresh");
  }
  const auto source_table = run_.source.inspect(run_.table);
  if (!source_table) return source_table.failure();
  // Before anything is written: a snapshot that would load other columns
  // than the table loaded stops here (core/run/schema_drift.h).
  const auto columns = check_columns(run_, *source_table, loaded, summary);
  if (!columns) return columns.failure();
  if (run_.cancel.cancelled()) return Error{run_.cancel.reason()};

  // A first load (no watermark yet) may go by ranges, or be a ranged one
  // resumed; a table with a watermark is a snapshot run's, and asks
  // nothing more of the state or the target.
  TargetChanges changes = columns->first_step;
  std::vector<LoadRange> plan;
  if (!summary.watermark_before) {
    const auto stored = run_.state.load_ranges(summary.table);
    if (!stored) return stored.failure();
    plan = *stored;
    if (!plan.empty()) {
      // The load that left them may have had helpers still writing when
      // it lost its lock.
      if (const Status settled = run_.target.await_range_helpers(RunLock{summary.table, std::nullopt}); !settled) {
        return settled;
      }
    }
    bool empty = changes.create;
    if (!empty) {
      const auto holds = run_.target.holds_rows(run_.table);
      if (!holds) return holds.failure();
      empty = !*holds;
    }
    if (empty) {
      // Afresh, whatever ranges a load before left: the target has none
      // of them (in one stream, the record below forgets them).
      plan.clear();
      const auto ranged = load_in_ranges(columns->source, *columns, summary);
      if (!ranged) return ranged.failure();
      if (*ranged) return ok_status();
    } else if (!plan.empty()) {
      const auto resumed = resume_ranges(plan, *columns, summary);
      if (!resumed) return resumed.failure();
      if (*resumed) changes = TargetChanges{};
      if (run_.cancel.cancelled()) return Error{run_.cancel.reason()};
    }
  }

  StepRecord record;
  record.lock = RunLock{summary.table, std::nullopt};
  record.run = summary.run;
  record.loaded_columns = columns->snapshot;
  // The target is one snapshot of the source once this commits: whatever
  // ranges a first load left (one resumed here, or one a mode changed
  // since left behind) are forgotten with it.
  record.ranges_finished = true;
  const auto written = commit_snapshot(run_.target, run_.table, columns->source, summary.watermark_before, record,
                                       changes, plan.empty() ? since : std::nullopt);
  if (!written) return written.failure();
  note_first_step(columns->first_step, summary);
  summary.watermark_after = written->taken_at;
  summary.rows_read += written->counts.rows_read;
  summary.rows_written += written->counts.rows_written;
  summary.rows_deleted = written->deleted;
  summary.chunks += 1;
  summary.snapshot_path = snapshot_path_text(*written);
  if (!plan.empty()) {
    const std::int64_t again = summary.chunks - 1;
    summary.snapshot_path =
        (again > 0 ? "first load resumed, " + std::to_string(again) + " of " + std::to_string(plan.size()) +
                         " ranges loaded again, then "
                   : "first load of " + std::to_string(plan.size()) + " ranges resumed by the diff alone: ") +
        summary.snapshot_path;
  }
  return ok_status();
}

Result<bool> SnapshotRun::load_in_ranges(const SourceTable& source, const ColumnPlan& columns, RunSummary& summary) {
  // A table without a key cannot be resumed: its rows loaded before could
  // not be told from those loaded again.
  if (run_.table.key.empty()) return false;
  const auto extent = run_.source.measure(run_.table, source);
  if (!extent) return extent.failure();
  if (!*extent) return false;
  const auto pages = plan_load_ranges(**extent, run_.table.ranges);
  if (!pages) return false;
  const auto held = run_.source.open_snapshot(run_.table, source);
  if (!held) return held.failure();
  if (!*held) return false;
  std::vector<LoadRange> ranges;
  for (std::size_t i = 0; i < pages->size(); ++i) ranges.push_back(LoadRange{static_cast<int>(i), (*pages)[i], false});
  Status loaded = run_.state.plan_load_ranges(summary.table, summary.run, *pages);
  if (loaded) {
    loaded = commit_ranges(source, ranges, static_cast<int>(ranges.size()), /*straight=*/true, columns, &**held,
                           summary);
  }
  run_.source.close_snapshot();
  if (!loaded) return loaded.failure();
  note_first_step(columns.first_step, summary);
  summary.watermark_after = (*held)->taken_at;
  summary.snapshot_path = "first load in " + std::to_string(ranges.size()) + " ranges";
  return true;
}

Result<bool> SnapshotRun::resume_ranges(const std::vector<LoadRange>& plan, const ColumnPlan& columns,
                                        RunSummary& summary) {
  // The ranges left are read in a snapshot of their own and upserted (the
  // rows of a later snapshot may sit in ranges already done, or have moved
  // out of those left: VACUUM FULL reorders the pages); the diff after
  // them makes the target one snapshot of the source. The diff alone does
  // that too, only dearer: it is all that is left when the table can no
  // longer be read by ranges (its key or its kind changed since) or not
  // under a lock.
  const std::vector<LoadRange> left = ranges_left(plan);
  if (left.empty() || run_.table.key.empty()) return false;
  const auto extent = run_.source.measure(run_.table, columns.source);
  if (!extent) return extent.failure();
  if (!*extent) return false;
  const auto held = run_.source.open_snapshot(run_.table, columns.source);
  if (!held) return held.failure();
  if (!*held) return false;
  const Status again =
      commit_ranges(columns.source, left, static_cast<int>(plan.size()), /*straight=*/false, columns, nullptr, summary);
  run_.source.close_snapshot();
  if (!again) return again.failure();
  return true;
}

Status SnapshotRun::commit_ranges(const SourceTable& source, const std::vector<LoadRange>& ranges, int planned,
                                  bool straight, const ColumnPlan& columns, const HeldSnapshot* finishing,
                                  RunSummary& summary) {
  const int done_before = planned - static_cast<int>(ranges.size());
  int committed = 0;
  const RangeCrew::Job commit = [&](Target& target, std::size_t i) -> Result<ChunkCounts> {
    if (run_.cancel.cancelled()) return Error{run_.cancel.reason()};
    StepRecord record;
    record.lock = RunLock{summary.table, std::nullopt};
    record.run = summary.run;
    record.range_done = ranges[i].index;
    if (i == 0) record.loaded_columns = columns.snapshot;
    const bool last = i + 1 == ranges.size();
    return commit_range(target, run_.table, source, ranges[i].pages, straight, record,
                        i == 0 ? columns.first_step : TargetChanges{}, summary.watermark_before,
                        last ? finishing : nullptr);
  };
  const RangeCrew::Done done = [&](std::size_t i, const ChunkCounts& counts) {
    summary.rows_read += counts.rows_read;
    summary.rows_written += counts.rows_written;
    summary.chunks += 1;
    committed += 1;
    run_.observer.on_range_committed(summary.table, ranges[i], done_before + committed, planned, counts);
  };
  const auto alone = [&](std::size_t i) -> Status {
    const auto counts = commit(run_.target, i);
    if (!counts) return counts.failure();
    done(i, *counts);
    return ok_status();
  };
  // The first range goes alone: it makes or changes the target table that
  // the others write into. So does the last when it finishes the load, so
  // that the watermark moves after every range has committed. Those
  // between go to the crew, which reads several at once.
  const std::size_t tail = finishing != nullptr ? 1 : 0;
  if (const Status first = alone(0); !first) return first;
  const std::size_t between = ranges.size() > 1 + tail ? ranges.size() - 1 - tail : 0;
  const int helpers = run_.table.ranges.workers - 1;
  if (run_.crew != nullptr && helpers > 0 && between > 1) {
    const Status crewed = run_.crew->run(
        run_.table, run_.target, between, helpers, [&](Target& target, std::size_t i) { return commit(target, i + 1); },
        [&](std::size_t i, const ChunkCounts& counts) { done(i + 1, counts); });
    if (!crewed) return crewed;
  } else {
    for (std::size_t i = 1; i < 1 + between; ++i) {
      if (const Status one = alone(i); !one) return one;
    }
  }
  if (tail == 1 && ranges.size() > 1) return alone(ranges.size() - 1);
  return ok_status();
}

}  // namespace tidemark
