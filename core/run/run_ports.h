// The effects a run needs, as small interfaces: the state store (locks,
// run rows), the source, and the target with its unit of work (the rows
// and the watermark, committed together). daemon/ implements them over
// libpq; tests/ has fakes. Every method reports an expected failure
// (database down, missing table) as a value; the rules (when to commit,
// what a lost lock or a moved watermark means) are core's, not theirs.
// An instance serves one run at a time and is not shared between threads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/config/config_model.h"
#include "core/diff/recent_rows.h"
#include "core/diff/row_diff.h"
#include "core/sql/copy_format.h"
#include "core/sql/relation_kind.h"
#include "core/sql/unique_index.h"
#include "core/watermark/cursor_value.h"
#include "core/time/partition_calendar.h"
#include "core/sql/key_row.h"
#include "core/result.h"
#include "core/run/load_range_plan.h"
#include "core/run/schema_drift.h"
#include "core/watermark/safe_horizon.h"
#include "core/run/table_key.h"
#include "core/run/target_fit.h"

namespace tidemark {

using RunId = std::int64_t;

// Takeover: a member of a fleet took the table over (its owner died, left
// or had lost its lease) and runs a firing the owner missed. Input: an
// input of the table (inputs:) moved, and woke it before its schedule.
// Resume: `resume --catch-up` ran a firing missed while the table was paused.
enum class RunTrigger { Schedule, Manual, Startup, Backfill, Retry, Reconcile, Takeover, Input, Resume };
std::string_view run_trigger_name(RunTrigger trigger);

struct StoredWatermark {
  CursorValue value;
  // Written by a snapshot run: the source's clock at a snapshot, which says
  // nothing of any cursor (an incremental run must not start from it, nor
  // a snapshot run from a cursor's watermark). Stored as value_type
  // "snapshot" (kSnapshotValueType).
  bool snapshot = false;
};

// What open_run found and did.
struct OpenedRun {
  RunId run = 0;
  std::optional<StoredWatermark> watermark;
  int abandoned = 0;  // earlier `running` rows marked failed
  // Why the stored watermark could not be read (a value of another type
  // than its value_type says); empty when it was. The run row is open
  // either way: the run fails it, as any other failure.
  std::string unreadable_watermark;
  // The columns the table's last successful load loaded (its schema
  // snapshot, core/run/schema_drift.h); nothing when none is stored.
  std::optional<std::vector<ColumnShape>> loaded_columns;
  // Where the table's last snapshot left each side (a snapshot table's;
  // nothing when none is stored): the hint of its next diff's first look.
  std::optional<SnapshotHorizon> snapshot_horizon;
};

// What a run row records when it starts. A partition's run has its
// window from the start.
struct RunStart {
  TableKey table;
  RunTrigger trigger = RunTrigger::Manual;
  std::optional<Window> window;
};

// What an incremental run learned about its safe horizon: how far hi was
// below the source clock, what held it there, whether the stored
// watermark was above it, and the rows whose cursor is NULL or infinite
// (no window ever includes them).
struct HorizonReport {
  std::optional<double> lag_seconds;
  std::string held_by;
  bool watermark_ahead = false;
  std::optional<std::int64_t> null_cursor_rows;
  std::optional<std::int64_t> infinite_cursor_rows;
  // How long an input (inputs:) has held the table back, in seconds: for
  // an incremental table how far past the inputs' limit the source alone
  // would have let hi go (heard by the observer, not kept in its run row:
  // such a table always trails its inputs); for a partition table how
  // long ago the first partition it holds back was complete by the
  // source. Nothing when no input held anything back
  // (tidemark_input_wait_seconds is then 0); held_by names the input.
  std::optional<double> input_wait_seconds;
};

// What a reconcile found and did: target rows deleted (or marked) because
// their key left the source, and source rows below the watermark that the
// target lacked (copied again).
struct ReconcileCounts {
  std::int64_t deleted = 0;  // target rows deleted or marked: their key left the source
  std::int64_t missing = 0;  // source rows below the watermark the target lacked
  std::int64_t changed = 0;  // ... that the target held with other values
};

// Updates and deletes the source's statistics counted on a table whose
// cursor cannot see them (core/run/change_watch.h): as last read, and how
// many of them no run could see since the table last ran clean (a
// successful reconcile, which copies changed rows again).
struct ChangeCount {
  std::int64_t counted = 0;
  std::int64_t unseen = 0;
};

// What a run row records when it ends.
struct RunEnd {
  bool success = false;
  std::optional<Window> window;  // the whole range read
  std::optional<CursorValue> watermark_after;
  std::int64_t rows_read = 0;
  std::int64_t rows_written = 0;
  std::string error;  // empty on success
  ErrorKind error_kind = ErrorKind::Transient;  // of a failure: whether a retry can help
  HorizonReport horizon;
  std::optional<ReconcileCounts> reconcile;  // a reconcile's totals
  // The schema drift the run found ("" when none); nothing when it did
  // not get as far as comparing the columns.
  std::optional<std::string> schema_drift;
  std::optional<ChangeCount> changes;  // a watched table's (core/run/change_watch.h)
  // A partition written again over one that was done: why ("lookback:
  // the query returns 31 rows, the target holds 30"); empty otherwise.
  std::string rewrite_reason;
};

// Which advisory lock guards a run: the table's, or one partition's.
struct RunLock {
  TableKey table;
  std::optional<TimeWindow> partition;
};

// The lock's advisory-lock key (core/run/table_key.h).
std::int64_t run_lock_key(const RunLock& lock);

// A compare-and-set of the watermark: from `expected` (nothing: no
// watermark yet) to `next`.
struct WatermarkMove {
  std::optional<CursorValue> expected;
  CursorValue next;
  bool snapshot = false;  // `next` is a snapshot's time (StoredWatermark::snapshot); so is `expected`, if any
};

// What the state database holds of one input of a table (inputs:).
struct InputState {
  // An incremental input's watermark, or a snapshot input's time.
  std::optional<StoredWatermark> watermark;
  // A partition input: the end of its done partitions, from the first one
  // on, up to the first gap; nothing when none is done.
  std::optional<Instant> partitions_done_until;
};

// What a table's inputs hold (StateStore::read_inputs), in one statement
// with how often they changed below its done partitions so far: a write
// carries that count into its record (StepRecord::input_changes_seen).
struct InputsRead {
  std::vector<InputState> inputs;  // in the order asked
  std::int64_t changes = 0;
};

// A done partition that must be checked again against its query, and why
// (an input it reads was rewound or repaired, or wrote again what it
// read). `since` tells this flag from a later one of the same partition:
// clearing it clears only this one.
struct FlaggedPartition {
  TimeWindow window;
  std::string because;
  std::int64_t since = 0;
};

// Done partitions of `tables` (the dependents of a table whose rows at or
// after `from` changed) to check again at their next firing: each that
// ends after `from`. Flagging counts a change of each table's inputs
// (InputsRead::changes) first.
struct DownstreamRecheck {
  std::vector<TableKey> tables;
  Instant from;
  std::string because;  // "input shop.orders rewound to 2026-12-01T00:00:00Z"
};

// What a batch of runs (core/run/load_batch.h) read of its tables' state
// at once: what open_run reads of each, in order, without a run row (run
// 0, abandoned 0), and when, by the state database's clock.
struct TablesRead {
  SourceMicros at = 0;
  std::vector<OpenedRun> tables;
};

// A run a batch found nothing to load for, recorded whole: its row,
// started at `started` (the state database's clock) and ended now, and
// its watermark's move, if any.
struct QuietRun {
  RunStart start;
  std::optional<Instant> scheduled;  // the firing it ran for
  SourceMicros started = 0;
  std::optional<WatermarkMove> move;
  RunEnd end;
};

// How a quiet run was recorded: written only while its lock was held and
// its watermark where the batch found it; its run row's id when it was.
struct QuietRunRecorded {
  bool written = false;
  RunId run = 0;
};

class StateStore {
 public:
  virtual ~StateStore() = default;
  // Takes the lock, without waiting unless `wait` (then bounded by the
  // store's lock timeout); false when it is held elsewhere.
  virtual Result<bool> lock(const RunLock& lock, bool wait) = 0;
  // Releases it; a no-op when not held. Never fails loudly: a lost session
  // has released it already.
  virtual void unlock(const RunLock& lock) = 0;
  // A run's first step, as one: marks the `running` rows the lock covers
  // failed (abandoned: the lock proves none is alive; a partition's lock
  // covers the rows of its window only), reads the watermark and the
  // table's loaded columns, and inserts
  // the `running` row, committed at once so it is visible during the run.
  // Requires the lock.
  virtual Result<OpenedRun> open_run(const RunStart& start) = 0;
  // Records the end of the run; best effort on an already failing path.
  virtual Status finish_run(RunId run, const RunEnd& end) = 0;

  // A batch's locks, taken without waiting in one go: for each, whether it
  // was taken (false: held elsewhere). A failure leaves none held.
  virtual Result<std::vector<bool>> try_lock_all(const std::vector<RunLock>& locks) = 0;
  // Releases them, as unlock() each.
  virtual void unlock_all(const std::vector<RunLock>& locks) = 0;
  // What open_run reads of each table, writing nothing. Requires the locks.
  virtual Result<TablesRead> read_tables(const std::vector<TableKey>& tables) = 0;
  // Records each run whole in one transaction, each conditional on its own
  // lock and watermark (as StepRecord's are; a move from no watermark is
  // never written: a batch runs tables that have one), and marks the rows
  // its lock proves abandoned, as open_run does. One result per run, in
  // order.
  virtual Result<std::vector<QuietRunRecorded>> record_quiet_runs(const std::vector<QuietRun>& runs) = 0;
  // The stored watermark, read without writing anything (reconcile's dry
  // run); nothing when none is stored.
  virtual Result<std::optional<StoredWatermark>> read_watermark(const TableKey& table) = 0;

  // Integer cursors: the (source clock, max cursor) observations earlier
  // runs kept. `source` names what they were taken of (source connection,
  // table, cursor); observations of anything else are not returned.
  virtual Result<std::vector<CursorSample>> read_cursor_samples(const TableKey& table, const std::string& source) = 0;
  // The change count the table's latest watched load recorded, its unseen
  // part 0 when a reconcile succeeded after it; nothing when none did.
  virtual Result<std::optional<ChangeCount>> last_change_count(const TableKey& table) = 0;
  // Forgets the observations taken before `forget_before` (and any of
  // another source) and keeps `add`. Requires the table's lock.
  virtual Status save_cursor_samples(const TableKey& table, const std::string& source,
                                     std::optional<SourceMicros> forget_before,
                                     const std::optional<CursorSample>& add) = 0;

  // Partition tables: hi of the latest partition marked done; nothing when none is.
  virtual Result<std::optional<Instant>> last_done_partition(const TableKey& table) = 0;
  // lo of every partition marked done that starts in [from, to).
  virtual Result<std::vector<Instant>> done_partitions(const TableKey& table, Instant from, Instant to) = 0;
  // Records a failed partition unless it is already done (its old rows stand).
  virtual Status mark_partition_failed(const TableKey& table, const TimeWindow& partition, RunId run) = 0;
  // The done partitions flagged to be checked again (DownstreamRecheck),
  // oldest first.
  virtual Result<std::vector<FlaggedPartition>> flagged_partitions(const TableKey& table) = 0;
  // Clears a flag a check found nothing behind, unless the partition was
  // flagged again since (a rewrite clears its own).
  virtual Status clear_flag(const TableKey& table, const FlaggedPartition& flag) = 0;
  // Flags partitions of other tables (DownstreamRecheck): on its own (a
  // rewind), or before a step's record, in its transaction when the state
  // lives in the target database, else committed first (a flag too many
  // only costs a check).
  virtual Status flag_downstream(const DownstreamRecheck& recheck) = 0;

  // What each input of `reader` holds (inputs:), in order, and how often
  // they changed below its done partitions: one statement.
  virtual Result<InputsRead> read_inputs(const TableKey& reader, const std::vector<TableRef>& inputs) = 0;
  // Records a run that wrote nothing, whole, as it ended: a partition
  // table's firing that something held back. Marks no other run abandoned.
  virtual Result<RunId> record_run(const RunStart& start, const RunEnd& end) = 0;
  // Tells every member that `table` moved, so that its dependents run
  // soon (best effort: their schedules fire anyway).
  virtual void announce_moved(const TableKey& table) = 0;

  // The ranges of the table's ranged first load (core/run/load_range_plan.h)
  // in order, each done or not; none when no such load is under way.
  virtual Result<std::vector<LoadRange>> load_ranges(const TableKey& table) = 0;
  // Replaces the table's ranges by `ranges`, none done, planned by `run`.
  // Requires the table's lock.
  virtual Status plan_load_ranges(const TableKey& table, RunId run, const std::vector<PageRange>& ranges) = 0;
};

// What the source says about a table before its run.
struct SourceTable {
  CursorType cursor_type = CursorType::TimestampTz;
  std::vector<std::string> columns;  // copied, in order
  std::vector<ColumnShape> catalog;  // every column of the source table, in order, with its type
  RelationKind kind = RelationKind::Table;
  std::vector<UniqueIndex> unique_indexes;  // a view's or a foreign table's: none
  // The fractional-second digits a timestamp cursor keeps (timestamptz(3):
  // 3): values are stored rounded to them.
  int cursor_fraction_digits = 6;
  // The database can stamp the cursor itself: the column has a default
  // (now(), nextval()), is an identity or generated, or the table has a
  // BEFORE row trigger on INSERT or UPDATE. When none does, the values
  // likely come from the application, its clock or its id allocator.
  bool cursor_stamped_by_database = true;
  // The logical replication subscription that writes the table; empty
  // when none does (HorizonInput::subscription).
  std::string subscription;
  // The cursor is an identity or takes nextval() by default: it sees
  // inserts only.
  bool cursor_insert_only = false;
  // The cursor column of a table (not a view, not a foreign table, whose
  // constraints the remote rows need not meet) is NOT NULL, and its
  // constraint validated: no row of it has a NULL cursor, so no look
  // needs to count them.
  bool cursor_never_null = false;
};

// What a look at a run's range found before any row is read.
struct WindowProbe {
  // Whether the range holds a row; true when that is not asked (no range,
  // a foreign table, whose every look is a remote query) and the range is
  // read all the same.
  bool has_rows = true;
  // The table's rows that no window includes: those whose cursor is NULL
  // (NULL >= lo is not true), and those whose cursor is infinity or
  // -infinity (above every hi, below every lo).
  std::int64_t null_cursor_rows = 0;
  std::int64_t infinite_cursor_rows = 0;
};

// What Source::open_snapshot read under the table's lock, before the
// snapshot: the source's clock, the snapshot's time a load read in it
// moves the watermark to, and on PostgreSQL 14 and later the oldest
// transaction still running (SnapshotHorizon::source).
struct HeldSnapshot {
  CursorValue taken_at;
  std::optional<std::int64_t> source_xmin;
};

class Source {
 public:
  virtual ~Source() = default;
  // Cursor type (timestamptz for a table without a cursor: a snapshot's
  // watermark is a time), the columns to copy (the configured ones, else
  // all) and every column with its type. Fails when the table, its cursor or a key
  // column is missing; a configured column that is missing is for the
  // run to judge (core/run/schema_drift.h): it may have been dropped.
  virtual Result<SourceTable> inspect(const TableConfig& table) = 0;
  // `tables` are about to be inspected, under their locks (a batch of
  // runs): a database may read what it needs of all of them at once.
  virtual void about_to_inspect(const std::vector<const TableConfig*>& /*tables*/) {}
  // What the safe horizon is decided from (core/safe_horizon.h): the
  // source's clock, for integer cursors max(cursor) read just before it,
  // and the oldest transaction still open that may write. On a standby
  // with a primary, read on the primary, and returns only once the
  // standby has replayed past that moment (fails after replay_timeout).
  // With `shared_after`, a reading of the source's clock and open
  // transactions that another run took a moment ago may serve instead, if
  // its clock is later than that: an earlier reading only holds hi lower.
  // Nothing: read afresh (integer cursors always are).
  virtual Result<HorizonReading> read_horizon(const TableConfig& table, CursorType type,
                                              std::optional<SourceMicros> shared_after) = 0;
  // An instant on the source's clock in a time cursor's type: a timestamp
  // or date in the source session's time zone.
  virtual Result<CursorValue> cursor_at(SourceMicros instant, CursorType type) = 0;
  // min(cursor), for a first load without `initial`; nothing when empty.
  virtual Result<std::optional<CursorValue>> lower_bound(const TableConfig& table, CursorType type) = 0;
  // One statement: whether `range` holds a row (asked unless nothing or a
  // foreign table), and the rows no window includes. The statement takes
  // the table's lock before its snapshot, so a table rewritten or
  // truncated meanwhile is seen as it was left, never as empty.
  virtual Result<WindowProbe> probe(const TableConfig& table, const SourceTable& source,
                                    const std::optional<Window>& range) = 0;
  // probe() of many tables of this source, each with its own outcome, in
  // order; by default one by one, a database may ask them all in one
  // statement.
  struct ProbeAsk {
    const TableConfig* table = nullptr;
    const SourceTable* source = nullptr;
    std::optional<Window> range;
  };
  virtual std::vector<Result<WindowProbe>> probe_all(const std::vector<ProbeAsk>& asks);
  // Updates and deletes of the table (its partitions' included) that the
  // source's statistics counted since they were last reset; nothing when
  // it keeps none for it (a view, a foreign table). Reads no row.
  virtual Result<std::optional<std::int64_t>> count_changes(const TableConfig& table) = 0;

  // The source table's pages and bytes, for a ranged first load; nothing
  // when it cannot be read by page ranges: anything but a plain table (a
  // view, a partitioned table, whose partitions repeat each other's CTIDs,
  // a foreign table), or a server before PostgreSQL 14, which has no TID
  // range scan (each range would read the whole table). Reads no row.
  virtual Result<std::optional<TableExtent>> measure(const TableConfig& table, const SourceTable& source) = 0;
  // Begins one snapshot of the source table, taken after its lock, that
  // every UnitOfWork::write_range reads until close_snapshot(): the ranges
  // read in it are exactly one snapshot of the table. Fails, transiently,
  // when the columns are no longer of the types `source` was inspected
  // with; nothing when this role may not LOCK the table.
  virtual Result<std::optional<HeldSnapshot>> open_snapshot(const TableConfig& table, const SourceTable& source) = 0;
  // Ends the snapshot open_snapshot() began, if any. Never fails loudly.
  virtual void close_snapshot() = 0;
};

struct ChunkCounts {
  std::int64_t rows_read = 0;
  std::int64_t rows_written = 0;
};

// What UnitOfWork::write_range wrote, and the target transaction's id
// plus one (SnapshotHorizon::target) where the target can tell.
struct RangeWrite {
  ChunkCounts counts;
  std::optional<std::int64_t> target_after;
};


struct PartitionRequest {
  TableKey table;
  RunId run = 0;
  TimeWindow window;
  // The window as local dates and wall-clock times in the pipeline's zone,
  // for date and timestamp (without time zone) columns.
  std::string lo_date;
  std::string hi_date;
  std::string lo_local;
  std::string hi_local;
  bool hourly = false;
};

// What one step of a run records beside the rows it wrote.
struct StepRecord {
  RunLock lock;  // must still be held when the step commits
  std::string lock_label;  // how messages name a partition's lock (its local date); empty: by its start
  RunId run = 0;
  std::optional<Window> window;  // the rows read, added to the run row's range
  ChunkCounts counts;            // added to the run row's counts
  std::optional<WatermarkMove> move;
  bool partition_done = false;  // marks lock.partition done by this run
  std::optional<ReconcileCounts> reconcile;  // added to the run row's reconcile counts
  // Stored as the table's loaded columns, replacing those before.
  std::optional<std::vector<ColumnShape>> loaded_columns;
  // Stored as the table's snapshot horizon, replacing the one before.
  std::optional<SnapshotHorizon> snapshot_horizon;
  // Marks that range of the table's ranged first load done.
  std::optional<int> range_done;
  // The table's ranged first load is whole: its ranges are forgotten.
  bool ranges_finished = false;
  // Done partitions of the dependents to flag, because the rows this step
  // wrote lie below their end (flag_downstream, before the record).
  std::optional<DownstreamRecheck> recheck;
  // A partition of a table with inputs: their count of changes as the
  // write read them with its inputs. Marking it done clears its flag,
  // unless the count has moved on since: then it is flagged, so that a
  // change made while it was written is checked at the next firing.
  std::optional<std::int64_t> input_changes_seen;
};

// What recording a step found. It is written (all of it) only when the
// lock is still held and, for a move, the stored watermark is `expected`.
struct StepRecorded {
  bool lock_held = false;
  bool written = false;
  std::optional<CursorValue> found;  // the stored watermark, for a move that was not written
};

// What a snapshot (UnitOfWork::replace_table) did: the rows it read and
// wrote (inserted, changed and deleted: an unchanged table writes none),
// the rows deleted among them, and the source's clock when it was read,
// no later than the snapshot it read.
// How it found what changed: both fingerprints equal (nothing to do), the
// rows written since the previous snapshot (they explained the whole
// difference, core/diff/recent_rows.h), the row diff (only what differs
// crossed), or the whole table crossed (a first load, or a diff that gave
// up: `whole_because` says why).
enum class SnapshotPath { Unchanged, Recent, Diffed, Whole };
struct SnapshotWrite {
  ChunkCounts counts;
  std::int64_t deleted = 0;
  CursorValue taken_at;
  SnapshotPath path = SnapshotPath::Whole;
  RowDiffCounts diff;  // Recent, Diffed, or a Whole that gave up: what the diff counted
  std::string whole_because;
  // Where this snapshot left each side, for the next one; nothing when the
  // servers cannot tell (before PostgreSQL 14) or the path read none.
  std::optional<SnapshotHorizon> horizon;
};

// What one batch of reconcile changed: the target rows it deleted or
// marked, and the rows it copied again.
struct ReconcileWrite {
  std::int64_t deleted = 0;
  ChunkCounts copied;
};

// What reconcile changes in one batch (UnitOfWork::reconcile).
struct ReconcileFix {
  std::vector<KeyRow> gone;     // target keys that left the source
  std::vector<KeyRow> recopy;   // source keys below the watermark to copy again
  std::string mark_column;      // empty: delete `gone`; else mark them
  CursorValue watermark;        // only rows below it are copied again
};

// One transaction of the target (and of the state, with it): the rows a
// step writes and its record commit together or not at all. When the
// state lives in another database the target commits first, then the
// state; should the second commit fail, the next run writes the same rows
// again, which the keyed write makes harmless. Rolled back when destroyed
// uncommitted. core/run_step.h holds the rule for driving it.
class UnitOfWork {
 public:
  virtual ~UnitOfWork() = default;
  // Adds `columns` to the target table, nullable, each with its source
  // type, unless the table has a column of that name by then (another
  // table loading into it may have added it). Comes before the unit's
  // write, in its transaction: rolled back with it.
  virtual Status add_columns(const TableConfig& table, const std::vector<ColumnShape>& columns) = 0;
  // Creates the target table (create_target): its schema when missing, the
  // user-defined types its columns need (enums, domains, composites) when
  // the target lacks them, and the table with `source`'s columns to load,
  // in order, each with the source's type and NOT NULL, and a primary key
  // on the key. Comes first in the unit, in its transaction: rolled back
  // with it. Fails, permanently, naming a type it cannot create (an
  // extension's, say).
  virtual Status create_table(const TableConfig& table, const SourceTable& source) = 0;
  // Copies the window's rows from the source and upserts them on the key.
  // The rows are read under the source table's lock, taken before the
  // read's snapshot: a rewrite or TRUNCATE committed while the read waited
  // for the lock is seen as it left the table, not as an empty one. Fails,
  // transiently, when the copied columns are no longer of the types
  // `source` was inspected with (changed_while_read).
  virtual Result<ChunkCounts> write_chunk(const TableConfig& table, const SourceTable& source,
                                          const Window& window) = 0;
  // Makes the target table equal to the source table's rows in one source
  // snapshot, read under the source table's lock as write_chunk reads:
  // inserts the new rows, updates the changed ones, deletes those whose key
  // the source lacks; unchanged rows are not rewritten. Fails like
  // write_chunk.
  // `since`: where the table's previous snapshot left each side, a hint
  // that can make a changed table cheaper and never less exact.
  virtual Result<SnapshotWrite> replace_table(const TableConfig& table, const SourceTable& source,
                                              const std::optional<SnapshotHorizon>& since) = 0;
  // Copies the rows of `pages` of the source table, read in the snapshot
  // Source::open_snapshot holds: `straight` into the target with COPY (a
  // first load, whose ranges are disjoint rows of one snapshot), else
  // staged and upserted on the key (a load resumed in another snapshot,
  // whose rows may already be there).
  virtual Result<RangeWrite> write_range(const TableConfig& table, const SourceTable& source, const PageRange& pages,
                                         bool straight) = 0;
  // Replaces one partition: deletes the target's rows in the window and
  // inserts the query's rows (run on the source with $1 = lo, $2 = hi),
  // each of which must lie in the window. Touches nothing outside it.
  virtual Result<ChunkCounts> replace_partition(const TableConfig& table, const PartitionRequest& request) = 0;
  // Reconcile's changes to one batch of keys: deletes the target rows of
  // `gone` (or, with a mark_column, sets it to the transaction's now()
  // where still null), then copies the source rows of `recopy` whose cursor
  // is below `watermark` again and upserts them (which clears a mark).
  virtual Result<ReconcileWrite> reconcile(const TableConfig& table, const SourceTable& source,
                                           const ReconcileFix& fix) = 0;
  // Checks the lock, compares and sets the watermark and writes the record
  // (run row, partition done), as StepRecorded says; fails, writing
  // nothing, when the state cannot be reached.
  virtual Result<StepRecorded> record(const StepRecord& record) = 0;
  // Makes everything above durable. On failure nothing of it holds (with
  // separate databases: nothing of the state).
  virtual Status commit() = 0;
};

// A done partition against its query now: each side's row count, and
// whether their checksums (of the query's columns, as the target stores
// them) agree.
struct PartitionComparison {
  std::int64_t source_rows = 0;
  std::int64_t target_rows = 0;
  bool same_checksum = true;

  bool equal() const { return source_rows == target_rows && same_checksum; }
  // "the query returns 31 rows, the target holds 30", or "... other values".
  std::string difference() const;
};

class Target {
 public:
  virtual ~Target() = default;
  // Reads the target table's columns (with their types, NOT NULL,
  // identity and generated) and unique indexes; fails when it does not
  // exist, naming it, unless the table has create_target: then says it
  // does not exist (TargetTable::exists). Whether it can take the loads is core's to say
  // (core/run/schema_drift.h, core/run/target_fit.h).
  virtual Result<TargetTable> check(const TableConfig& table) = 0;
  // As Source::about_to_inspect, for check().
  virtual void about_to_check(const std::vector<const TableConfig*>& /*tables*/) {}
  // Whether the target table holds a row: read at once, never kept.
  virtual Result<bool> holds_rows(const TableConfig& table) = 0;
  // A new unit of work under `lock`, which the run holds; nothing is sent
  // until it is used. Rows it writes are written under the lock too (on
  // the target itself when the state lives elsewhere), so that a run that
  // lost its state session cannot interleave its rows with the next
  // holder's.
  virtual std::unique_ptr<UnitOfWork> begin(const RunLock& lock) = 0;
  // Waits until no helper of an earlier run of `lock`'s table (RangeCrew)
  // can still commit a range: one whose run lost its lock while it wrote
  // must not land after a run that holds the lock now has read the target.
  virtual Status await_range_helpers(const RunLock& lock) = 0;
  // Compares a partition's rows in the target with what its query returns
  // on the source now ($1, $2 bound as a write binds them). Reads only.
  virtual Result<PartitionComparison> compare_partition(const TableConfig& table,
                                                        const PartitionRequest& request) = 0;
};

}  // namespace tidemark
