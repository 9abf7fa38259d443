// Carries out one reconcile of an incremental table (SPEC §4, `tidemark
// reconcile`; docs/drift-and-deletes.md): under the table's lock, compare
// the key sets of source and target bucket by bucket, fetch the keys of
// the buckets that differ only, in batches, and per batch delete (or mark)
// the target rows whose key left the source (and is still absent when the
// source is asked again, just before the batch) and copy again the source
// rows below the watermark that the target lacks or holds with other
// values (changed without their cursor moving), each batch committed
// with its counts in the run row. A dry run takes the lock and compares,
// and writes nothing, not even a run row.
// One instance per reconcile, on the calling thread; expected failures end
// up in the report (and the run row), never as exceptions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/reconcile/bucket_plan.h"
#include "core/reconcile/reconcile_ports.h"
#include "core/run/run_context.h"

namespace tidemark {

struct ReconcileRequest {
  RunTrigger trigger = RunTrigger::Reconcile;
  bool wait_for_lock = true;  // a manual reconcile waits for a load to finish; the scheduler's does not
  bool dry_run = false;
  std::size_t examples = 5;              // keys of each kind kept for the report
  std::int64_t batch_keys = kBatchKeys;  // keys (both sides) held and committed at once
};

// A partition table's done partition as its reconcile (PartitionRepair)
// found and left it.
struct PartitionChecked {
  TimeWindow window;
  PartitionComparison found;
  // Written again from its query (not in a dry run); false when it was
  // equal, a backfill held it, or its write failed (`error`).
  bool rewritten = false;
  std::string error;
};

struct ReconcileReport {
  RunSummary run;  // status, run row, error; run.reconcile: the counts committed
  ReconcileCounts counts;       // found (dry run) or done
  ChunkCounts copied;           // the missing rows copied again (committed)
  std::int64_t restored = 0;    // marked rows copied again because the source holds them again
  bool no_watermark = false;    // nothing claimed yet: nothing compared
  std::int64_t buckets = 0;
  std::int64_t differing_buckets = 0;
  std::int64_t keys_fetched = 0;  // keys read from both sides (0 when no bucket differs)
  int batches = 0;                // pieces of the key listings merged (each committed, unless a dry run)
  std::vector<std::string> deleted_examples;  // key texts, ROW(...)::text
  std::vector<std::string> missing_examples;
  std::vector<std::string> changed_examples;
  std::vector<std::string> uncompared;  // columns whose type differs between the sides: not compared
  // A partition table's: each done partition compared, oldest first, and
  // how many done ones were left for later because the source or an input
  // has not passed their end (`held_by` says which).
  std::vector<PartitionChecked> partitions;
  std::size_t partitions_not_complete = 0;
  std::string held_by;
};

class ReconcileRun {
 public:
  // `context.observer` is not told: a reconcile is not a load, and its
  // caller reports the counts (the reconcile gauges).
  ReconcileRun(const RunContext& context, KeySide& source_keys, KeySide& target_keys)
      : run_(context), source_keys_(source_keys), target_keys_(target_keys) {}

  // Requires table.mode == Incremental.
  ReconcileReport execute(const ReconcileRequest& request);

 private:
  // The comparison and its batches, under the lock; fills `report`.
  Status reconcile_locked(const ReconcileRequest& request, const std::optional<CursorValue>& watermark, RunId run,
                          ReconcileReport& report);

  // Reads both key listings in step and merges and commits them piece by
  // piece (each piece at most about request.batch_keys keys).
  // `source_below_empty`: the source's aggregate counted no row below the
  // watermark (then an empty source listing means an empty source table,
  // which is refused).
  Status merge_listings(const ReconcileRequest& request, const CursorValue& w, RunId run, bool source_below_empty,
                        ReconcileReport& report);

  const RunContext run_;
  SourceTable source_table_;  // what the source said, for copying rows again
  KeySide& source_keys_;
  KeySide& target_keys_;
};

// The action a reconcile of `table` takes: its deletes' mark_column, or
// nothing (delete) for a table without deletes or with action delete.
std::string reconcile_mark_column(const TableConfig& table);

}  // namespace tidemark
