// The StateStore over the state database: the table's session advisory
// lock, watermarks (compare-and-set) and run rows. It owns no connection:
// it works on the one it is given, which holds the lock for the whole run.
// Used by one run on one thread.
#pragma once

#include <map>
#include <string>

#include "core/run/run_ports.h"
#include "daemon/pg/libpq/pg_connection.h"
#include "daemon/pg/state/step_recorder.h"

namespace tidemark {

// An audited rewind: what `tidemark rewind` asks the store to do.
struct WatermarkRewind {
  TableKey table;
  CursorValue to;
  std::string reason;    // kept forever in tidemark.watermark_resets
  std::string reset_by;  // who asked (the operating system user)
  // The dependents' done partitions to flag, with the rewind.
  std::optional<DownstreamRecheck> downstream;
};

// The channel announce_moved notifies on; its payload is the table as a
// JSON array, ["pipeline", "table"].
inline constexpr std::string_view kMovedChannel = "tidemark_moved";

// What a rewind did.
struct WatermarkRewound {
  // False when a run holds the table's lock: nothing was changed.
  bool done = false;
  // The value replaced, read under the lock in the rewind's own
  // transaction, so it is exactly what the audit row records; nothing
  // when the table had no watermark.
  std::optional<std::string> old_value;
};

class PgStateStore final : public StateStore, public StepRecorder {
 public:
  explicit PgStateStore(PgConnection& connection);

  // The firing the runs of this store serve (its scheduled instant, on the
  // daemon's clock), written to each run row it opens: a later catch-up
  // compares firings with firings, whatever the two hosts' clocks say.
  // Unset (a run from the command line): none.
  void set_firing(Instant scheduled) { firing_ = scheduled; }

  Result<bool> lock(const RunLock& lock, bool wait) override;
  void unlock(const RunLock& lock) override;
  Result<OpenedRun> open_run(const RunStart& start) override;
  Status finish_run(RunId run, const RunEnd& end) override;
  Result<std::vector<bool>> try_lock_all(const std::vector<RunLock>& locks) override;
  void unlock_all(const std::vector<RunLock>& locks) override;
  Result<TablesRead> read_tables(const std::vector<TableKey>& tables) override;
  Result<std::vector<QuietRunRecorded>> record_quiet_runs(const std::vector<QuietRun>& runs) override;
  Result<std::vector<CursorSample>> read_cursor_samples(const TableKey& table, const std::string& source) override;
  Result<std::optional<ChangeCount>> last_change_count(const TableKey& table) override;
  Status save_cursor_samples(const TableKey& table, const std::string& source,
                             std::optional<SourceMicros> forget_before,
                             const std::optional<CursorSample>& add) override;
  Result<std::optional<Instant>> last_done_partition(const TableKey& table) override;
  Result<std::vector<Instant>> done_partitions(const TableKey& table, Instant from, Instant to) override;
  Status mark_partition_failed(const TableKey& table, const TimeWindow& partition, RunId run) override;
  Result<std::vector<FlaggedPartition>> flagged_partitions(const TableKey& table) override;
  Status clear_flag(const TableKey& table, const FlaggedPartition& flag) override;
  Status flag_downstream(const DownstreamRecheck& recheck) override;
  Result<InputsRead> read_inputs(const TableKey& reader, const std::vector<TableRef>& inputs) override;
  Result<RunId> record_run(const RunStart& start, const RunEnd& end) override;
  void announce_moved(const TableKey& table) override;
  Result<std::vector<LoadRange>> load_ranges(const TableKey& table) override;
  Status plan_load_ranges(const TableKey& table, RunId run, const std::vector<PageRange>& ranges) override;

  Result<std::optional<StoredWatermark>> read_watermark(const TableKey& table) override;
  // The watermark's text as stored, whatever the cursor's type now;
  // nothing before the first.
  Result<std::optional<std::string>> stored_watermark(const TableKey& table);

  // A step's record (core/run_ports.h StepRecord), as one statement on
  // `tx`: the state connection, or the target connection when the two are
  // one, inside the unit of work's transaction or on its own. Reports what
  // it found; writes nothing unless the lock is held and the
  // compare-and-set holds. A partition with step.input_changes_seen is
  // marked done and flagged when `input_changes_counted` (its count, as
  // count_input_changes read it under its lock in `tx`'s transaction)
  // differs. Fails when the statement fails.
  Result<StepRecorded> record_step(PgConnection& tx, const StepRecord& step,
                                   std::optional<std::int64_t> input_changes_counted = std::nullopt) override;

  // The counts of tidemark.input_changes, locked in one order on `tx`
  // until its transaction ends: `own`'s read (shared), each of `changed`
  // counted one change more. Returns `own`'s count; nothing without it.
  Result<std::optional<std::int64_t>> count_input_changes(PgConnection& tx, const std::optional<TableKey>& own,
                                                          const std::vector<TableKey>& changed) override;
  // Flags the done partitions `recheck` names, on `tx` (after their
  // tables' changes were counted: flag_downstream does both).
  Status flag_partitions(PgConnection& tx, const DownstreamRecheck& recheck) override;

  PgConnection& connection() override { return connection_; }

  // Makes this store a helper's (PgRangeCrew): it records ranges of the
  // run whose state session, server process `holder_pid`, holds `lock`,
  // checked in pg_locks as each record runs, never taking or moving
  // anything itself.
  void help(const RunLock& lock, int holder_pid);
  // The server process holding `lock` for this store; 0: none.
  int holder_of(const RunLock& lock) const;

 private:
  PgConnection& connection_;
  // The locks this store holds: each one's key and the server process
  // (pg_backend_pid) of the session that took it.
  std::map<std::int64_t, int> holder_pid_;
  bool helper_ = false;  // help()
  std::optional<Instant> firing_;
  std::string host_;

 public:
  // Sets the table's watermark to `rewind.to` and records the change in
  // tidemark.watermark_resets, in one transaction under the table's
  // advisory lock (a transaction-level lock: it ends with the
  // transaction), so no run moves the watermark between the read of the
  // old value and the write, and the audit row's old_value is exact; the
  // dependents' partitions it names are flagged in it too. Does
  // not wait: when a run holds the lock, returns done = false having
  // changed nothing. Requires no transaction open on the connection.
  // Fails, having changed nothing, when a statement does.
  Result<WatermarkRewound> rewind_watermark(const WatermarkRewind& rewind);
};

}  // namespace tidemark
