// A scheduled (or `tidemark run`) firing of a partition table: under the
// table's lock, writes every complete partition after the last one done,
// oldest first, each as its own run (PartitionWriter), then checks again
// the done partitions its lookback reaches and those an input flagged,
// rewriting each that differs from its query. Stops at the first failure
// or at a partition a backfill is writing, so partitions are done in
// order. One instance per firing, on one worker thread.
#pragma once

#include <set>
#include <vector>

#include "core/run/partition_writer.h"
#include "core/run/run_context.h"

namespace tidemark {

// How far a partition table's partitions are complete.
struct PartitionHorizon {
  // The source's clock (less the report margin): where the calendar alone
  // would put it.
  Instant clock;
  // Partitions that end at or before it are complete by the source alone:
  // its safe horizon, so that a partition still receiving rows from a
  // transaction in flight waits. Nothing while a prepared transaction is
  // open (its rows may be stamped anywhere before it).
  std::optional<Instant> by_source;
  // ... and by every input too (inputs:): what a firing writes up to.
  std::optional<Instant> complete_before;
  // With inputs: their count of changes as read with them (the writes
  // carry it, PartitionWriter::Why).
  std::optional<std::int64_t> input_changes;
};

// Reads the inputs' state of `key`'s table, then the source's horizon. A
// horizon the source cannot fully see (no pg_monitor, a standby without
// primary:) is used as it is and noted in `report`, as is what the inputs
// hold back. Fails when the source or the state cannot be asked, an
// input's watermark is no time, or the table has inputs and its source is
// a standby without primary: (its replay may lag what the inputs claim).
Result<PartitionHorizon> partition_horizon(Source& source, StateStore& state, const TableKey& key,
                                           const TableConfig& table, HorizonReport& report);

class PartitionRun {
 public:
  explicit PartitionRun(const RunContext& context) : run_(context), writer_(context) {}

  // The summary spans every partition written: range from the first lo to
  // the last hi, rows summed, chunks = partitions written, rewrite_reason
  // the rewrites'. Success with no partitions when none is due. Each
  // partition is reported to the observer as it finishes; the firing
  // itself only when it did not succeed and no partition was reported (the
  // table's lock held elsewhere, the source not reached). A firing that
  // something held back from a partition the calendar has completed
  // records a run row saying what.
  RunSummary execute(RunTrigger trigger);

 private:
  Status fire(RunTrigger trigger, RunSummary& summary);
  // Writes `partition` and adds it to the firing's summary; false when the
  // firing stops there (a backfill holds it: quietly).
  Result<bool> write(const TimeWindow& partition, RunTrigger trigger, const PartitionWriter::Why& why,
                     RunSummary& summary);
  // Checks again the done partitions the lookback reaches (not on a
  // firing an input woke) and those of `flags` that the inputs have passed
  // again (except `written`), rewriting each that differs and clearing the
  // flags of those that do not.
  Status recheck(RunTrigger trigger, const PartitionHorizon& horizon, const std::set<Instant>& written,
                 const std::vector<FlaggedPartition>& flags, RunSummary& summary);
  // What held the firing back from the partition the calendar has
  // completed, as a run row of its own; nothing when nothing did.
  // `last_done`: hi of the latest partition done, after this firing's.
  Status record_hold(RunTrigger trigger, const PartitionHorizon& horizon, std::optional<Instant> last_done,
                     std::optional<Instant> initial, RunSummary& summary);

  const RunContext run_;  // references only: the run owns none of it
  PartitionWriter writer_;
};

}  // namespace tidemark
