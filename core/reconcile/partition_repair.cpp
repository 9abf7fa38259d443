#include "core/reconcile/partition_repair.h"

#include <algorithm>
#include <cstdlib>

#include "core/run/partition_run.h"
#include "core/run/run_lifecycle.h"

namespace tidemark {

ReconcileReport PartitionRepair::execute(const ReconcileRequest& request) {
  if (run_.table.mode != TableMode::Partition) std::abort();
  ReconcileReport report;
  // The frame reports to nobody: the reconcile's caller reports it, and each
  // partition written is a run heard on its own.
  RunObserver unheard;
  // The table's lock orders the repair with the firings; each partition
  // written again is a run of its own, with its row.
  RunLifecycle frame(run_.state, run_.ownership, unheard, RunLock{run_.key(), std::nullopt}, request.trigger,
                     RunRow::None);
  frame.summary().partitions = true;
  const Status outcome =
      frame.open(request.wait_for_lock) ? repair_locked(request, frame.summary(), report) : ok_status();
  report.run = frame.finish(outcome, run_.cancel.cancelled());
  return report;
}

Status PartitionRepair::repair_locked(const ReconcileRequest& request, RunSummary& summary, ReconcileReport& report) {
  // Only what the source and the inputs have passed: a partition past an
  // input rewound a moment ago would be compared with half its rows.
  const auto horizon = partition_horizon(run_.source, run_.state, summary.table, run_.table, summary.horizon);
  if (!horizon) return horizon.failure();
  auto done = run_.state.done_partitions(summary.table, kCalendarStart, kCalendarEnd);
  if (!done) return done.failure();
  std::vector<Instant> oldest_first = *done;
  std::sort(oldest_first.begin(), oldest_first.end());
  const PartitionUnit unit = run_.table.partition->unit;
  const TimeZone& zone = *run_.pipeline.zone;
  std::string first_failure;
  std::size_t failed = 0;
  for (const Instant lo : oldest_first) {
    const TimeWindow partition = partition_containing(lo, unit, zone);
    if (!horizon->complete_before || partition.hi > *horizon->complete_before) {
      ++report.partitions_not_complete;
      report.held_by = summary.horizon.held_by;
      continue;
    }
    if (run_.cancel.cancelled()) return Error{run_.cancel.reason()};
    const auto compared =
        run_.target.compare_partition(run_.table, partition_request(summary.table, 0, partition, zone, unit));
    if (!compared) return compared.failure();
    PartitionChecked checked{partition, *compared, false, {}};
    if (!compared->equal() && !request.dry_run) {
      const RunSummary one =
          writer_.write(partition, request.trigger, request.wait_for_lock,
                        {"reconcile: " + compared->difference(), horizon->input_changes});
      if (one.status == RunStatus::Success) {
        checked.rewritten = true;
        summary.rows_read += one.rows_read;
        summary.rows_written += one.rows_written;
        ++summary.chunks;
      } else {
        checked.error = one.status == RunStatus::SkippedLocked ? "a backfill holds it" : one.error;
        if (one.status != RunStatus::SkippedLocked && failed++ == 0) first_failure = one.error;
      }
    }
    report.partitions.push_back(std::move(checked));
  }
  if (failed > 0) {
    return Error{std::to_string(failed) + (failed == 1 ? " partition" : " partitions") +
                 " could not be written again; the first: " + first_failure};
  }
  return ok_status();
}

}  // namespace tidemark
