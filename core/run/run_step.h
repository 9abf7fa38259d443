// How one step of a run commits (SPEC §3, the watermark invariant): the
// step's rows are written, then its record, in one unit of work that is
// committed only when the record was written, that is while the run still
// holds its lock and, when the watermark moves, while the watermark is
// still where the run found it. Any other outcome rolls everything back
// and fails the step, naming why. Stateless functions over the ports.
#pragma once

#include <functional>

#include "core/run/run_ports.h"

namespace tidemark {

// What the first step of a run changes in the target before its rows, in
// its transaction: the table created (create_target), new source columns
// added (on_schema_change: append_new_columns).
struct TargetChanges {
  bool create = false;
  std::vector<ColumnShape> append;

  bool empty() const { return !create && append.empty(); }
};

// Loads one chunk: makes `changes` to the target, copies and upserts the
// rows of `record.window`, then records them (and moves the watermark,
// when the record says so).
Result<ChunkCounts> commit_chunk(Target& target, const TableConfig& table, const SourceTable& source,
                                 StepRecord record, const TargetChanges& changes = {});

// Makes the target equal to one snapshot of the source table (after
// `changes`), then records it, moving the watermark from `expected` to
// the snapshot's source clock and storing where the snapshot left each
// side; `since` is where the previous one left them.
Result<SnapshotWrite> commit_snapshot(Target& target, const TableConfig& table, const SourceTable& source,
                                      const std::optional<CursorValue>& expected, StepRecord record,
                                      const TargetChanges& changes = {},
                                      const std::optional<SnapshotHorizon>& since = std::nullopt);

// Loads one range of a ranged first load (record.range_done): makes
// `changes` to the target, copies the range's rows read in the source's
// held snapshot (straight in, or upserted: UnitOfWork::write_range), then
// records the range done. With `finishing`, the snapshot every range was
// read in, the load is whole with it: the watermark moves from `expected`
// to the snapshot's time, where the snapshot left each side is stored,
// and the ranges are forgotten.
Result<ChunkCounts> commit_range(Target& target, const TableConfig& table, const SourceTable& source,
                                 const PageRange& pages, bool straight, StepRecord record,
                                 const TargetChanges& changes = {},
                                 const std::optional<CursorValue>& expected = std::nullopt,
                                 const HeldSnapshot* finishing = nullptr);

// Replaces one partition and marks it done (record.partition_done).
Result<ChunkCounts> commit_partition(Target& target, const TableConfig& table, const PartitionRequest& request,
                                     StepRecord record);

// Applies one batch of reconcile's changes and records its counts
// (record.reconcile; record.counts gets the rows copied again).
// `downstream`, when given, names the dependents' partitions that what the
// batch changed reaches; they are flagged with its record.
Result<ReconcileWrite> commit_reconcile(
    Target& target, const TableConfig& table, const SourceTable& source, const ReconcileFix& fix, StepRecord record,
    const std::function<std::optional<DownstreamRecheck>(const ReconcileWrite&)>& downstream = nullptr);

// A step that writes no rows: the watermark moves on its own (a window
// with nothing in it still teaches the run a later hi), after `changes`
// (a first run over no rows still creates its target).
Status commit_record(Target& target, const StepRecord& record);
Status commit_record(Target& target, const TableConfig& table, const SourceTable& source, const StepRecord& record,
                     const TargetChanges& changes);

}  // namespace tidemark
