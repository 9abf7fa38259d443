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

  StepRecord record;
  record.lock = RunLock{summary.table, std::nullopt};
  record.run = summary.run;
  record.loaded_columns = columns->snapshot;
  const auto written =
      commit_snapshot(run_.target, run_.table, columns->source, summary.watermark_before, record, columns->first_step,
                      since);
  if (!written) return written.failure();
  note_first_step(columns->first_step, summary);
  summary.watermark_after = written->taken_at;
  summary.rows_read = written->counts.rows_read;
  summary.rows_written = written->counts.rows_written;
  summary.rows_deleted = written->deleted;
  summary.chunks = 1;
  summary.snapshot_path = snapshot_path_text(*written);
  return ok_status();
}

}  // namespace tidemark
