#include "core/run/run_step.h"

#include "core/time/instant_text.h"

namespace tidemark {
namespace {

std::string lock_name(const StepRecord& record) {
  std::string name = record.lock.table.display();
  if (record.lock.partition) {
    name += " partition " + (record.lock_label.empty() ? format_instant(record.lock.partition->lo) : record.lock_label);
  }
  return name;
}

// Records the step in `work` and commits it, or leaves it to be rolled back.
Status record_and_commit(UnitOfWork& work, const StepRecord& record) {
  const auto recorded = work.record(record);
  if (!recorded) return recorded.failure();
  if (!recorded->lock_held) {
    // The session that held the lock is gone (and the lock with it), so
    // another run may be writing: nothing of this step may land.
    return Error{"the lock of " + lock_name(record) + " is no longer held by this run; nothing committed"};
  }
  if (!recorded->written) {
    return Error{"the watermark of " + record.lock.table.display() + " is no longer " +
                 cursor_text_or_none(record.move ? record.move->expected : std::nullopt) + " but " +
                 cursor_text_or_none(recorded->found) +
                 ": another writer moved it; nothing committed"};
  }
  return work.commit();
}

// Makes the first step's changes to the target, in `work`'s transaction.
Status change_target(UnitOfWork& work, const TableConfig& table, const SourceTable& source,
                     const TargetChanges& changes) {
  if (changes.create) {
    if (const Status created = work.create_table(table, source); !created) return created;
  }
  if (!changes.append.empty()) return work.add_columns(table, changes.append);
  return ok_status();
}

}  // namespace

Result<ChunkCounts> commit_chunk(Target& target, const TableConfig& table, const SourceTable& source,
                                 StepRecord record, const TargetChanges& changes) {
  if (!record.window) std::abort();  // a chunk is a window's rows
  const std::unique_ptr<UnitOfWork> work = target.begin(record.lock);
  if (const Status changed = change_target(*work, table, source, changes); !changed) return changed.failure();
  const auto counts = work->write_chunk(table, source, *record.window);
  if (!counts) return counts.failure();
  record.counts = *counts;
  if (counts->rows_written == 0) record.recheck.reset();  // nothing a dependent reads has changed
  if (const Status committed = record_and_commit(*work, record); !committed) return committed.failure();
  return counts;
}

Result<SnapshotWrite> commit_snapshot(Target& target, const TableConfig& table, const SourceTable& source,
                                      const std::optional<CursorValue>& expected, StepRecord record,
                                      const TargetChanges& changes, const std::optional<SnapshotHorizon>& since) {
  if (record.window || record.move) std::abort();  // a snapshot has no window; its move comes from its read
  const std::unique_ptr<UnitOfWork> work = target.begin(record.lock);
  if (const Status changed = change_target(*work, table, source, changes); !changed) return changed.failure();
  // A target changed here (columns added) differs from what the horizon
  // saw: the hint is left out, and the fingerprints decide alone.
  const auto written = work->replace_table(table, source, changes.empty() ? since : std::nullopt);
  if (!written) return written.failure();
  record.counts = written->counts;
  record.snapshot_horizon = written->horizon;
  record.move = WatermarkMove{expected, written->taken_at, /*snapshot=*/true};
  if (const Status committed = record_and_commit(*work, record); !committed) return committed.failure();
  return written;
}

Result<ChunkCounts> commit_range(Target& target, const TableConfig& table, const SourceTable& source,
                                 const PageRange& pages, bool straight, StepRecord record,
                                 const TargetChanges& changes, const std::optional<CursorValue>& expected,
                                 const HeldSnapshot* finishing) {
  if (!record.range_done || record.window || record.move) std::abort();  // a range records itself, moves via `finishing`
  const std::unique_ptr<UnitOfWork> work = target.begin(record.lock);
  if (const Status changed = change_target(*work, table, source, changes); !changed) return changed.failure();
  const auto written = work->write_range(table, source, pages, straight);
  if (!written) return written.failure();
  record.counts = written->counts;
  if (finishing != nullptr) {
    record.move = WatermarkMove{expected, finishing->taken_at, /*snapshot=*/true};
    if (finishing->source_xmin && written->target_after) {
      record.snapshot_horizon = SnapshotHorizon{*finishing->source_xmin, *written->target_after};
    }
    record.ranges_finished = true;
  }
  if (const Status committed = record_and_commit(*work, record); !committed) return committed.failure();
  return written->counts;
}

Result<ChunkCounts> commit_partition(Target& target, const TableConfig& table, const PartitionRequest& request,
                                     StepRecord record) {
  if (!record.lock.partition || !record.partition_done) std::abort();  // a partition commits under its own lock
  const std::unique_ptr<UnitOfWork> work = target.begin(record.lock);
  const auto counts = work->replace_partition(table, request);
  if (!counts) return counts.failure();
  record.counts = *counts;
  if (const Status committed = record_and_commit(*work, record); !committed) return committed.failure();
  return counts;
}

Result<ReconcileWrite> commit_reconcile(
    Target& target, const TableConfig& table, const SourceTable& source, const ReconcileFix& fix, StepRecord record,
    const std::function<std::optional<DownstreamRecheck>(const ReconcileWrite&)>& downstream) {
  if (!record.reconcile || record.move) std::abort();  // a reconcile step records counts, never a watermark
  const std::unique_ptr<UnitOfWork> work = target.begin(record.lock);
  const auto changed = work->reconcile(table, source, fix);
  if (!changed) return changed.failure();
  record.reconcile->deleted = changed->deleted;
  record.counts = changed->copied;
  if (downstream) record.recheck = downstream(*changed);
  if (const Status committed = record_and_commit(*work, record); !committed) return committed.failure();
  return changed;
}

Status commit_record(Target& target, const StepRecord& record) {
  const std::unique_ptr<UnitOfWork> work = target.begin(record.lock);
  return record_and_commit(*work, record);
}

Status commit_record(Target& target, const TableConfig& table, const SourceTable& source, const StepRecord& record,
                     const TargetChanges& changes) {
  const std::unique_ptr<UnitOfWork> work = target.begin(record.lock);
  if (const Status changed = change_target(*work, table, source, changes); !changed) return changed;
  return record_and_commit(*work, record);
}

}  // namespace tidemark
