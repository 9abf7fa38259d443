// The effects one incremental run needs, as small interfaces: the state
// store (lock, watermark, run rows), the source and the target. daemon/
// implements them over libpq; tests/ has fakes. Every method reports an
// expected failure (database down, missing table, lost race) as a value.
// An instance serves one run at a time and is not shared between threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/config_model.h"
#include "core/cursor_value.h"
#include "core/partition_calendar.h"
#include "core/result.h"
#include "core/safe_horizon.h"
#include "core/table_key.h"
#include "core/window_plan.h"

namespace tidemark {

struct Unit {};
using Status = Result<Unit>;
inline Status ok_status() { return Unit{}; }

using RunId = std::int64_t;

enum class RunTrigger { Schedule, Manual, Startup, Backfill, Retry };
std::string_view run_trigger_name(RunTrigger trigger);

struct StoredWatermark {
  CursorValue value;
};

// What open_run found and did.
struct OpenedRun {
  RunId run = 0;
  std::optional<StoredWatermark> watermark;
  int abandoned = 0;  // earlier `running` rows marked failed
};

// What a run row records when it starts.
struct RunStart {
  TableKey table;
  RunTrigger trigger = RunTrigger::Manual;
  std::optional<CursorValue> watermark_before;
  std::optional<Window> window;  // known at the start for a partition
};

// What an incremental run learned about its safe horizon: how far hi was
// below the source clock, what held it there, whether the stored
// watermark was above it, and the rows whose cursor is NULL (no window
// ever includes them).
struct HorizonReport {
  std::optional<double> lag_seconds;
  std::string held_by;
  bool watermark_ahead = false;
  std::optional<std::int64_t> null_cursor_rows;
};

// What a run row records when it ends.
struct RunEnd {
  bool success = false;
  std::optional<Window> window;  // the whole range read
  std::optional<CursorValue> watermark_after;
  std::int64_t rows_read = 0;
  std::int64_t rows_written = 0;
  std::string error;  // empty on success
  HorizonReport horizon;
};

class StateStore {
 public:
  virtual ~StateStore() = default;
  // Takes the table's session advisory lock without waiting; false if held elsewhere.
  virtual Result<bool> try_lock(const TableKey& table) = 0;
  // Releases it; a no-op when not held. Never fails loudly: a lost session
  // has released it already.
  virtual void unlock(const TableKey& table) = 0;
  // Marks `running` rows of the table failed (abandoned); returns how many.
  // Requires the lock, so none of them can still be alive. With `only`,
  // just the rows of that window (a partition, under its own lock).
  virtual Result<int> fail_abandoned_runs(const TableKey& table, const std::optional<Window>& only) = 0;
  virtual Result<std::optional<StoredWatermark>> read_watermark(const TableKey& table) = 0;
  // Inserts the `running` row, committed at once so it is visible during the run.
  virtual Result<RunId> start_run(const RunStart& start) = 0;
  // An incremental run's first step, as one: fail_abandoned_runs (for the
  // whole table), read_watermark, and start_run with that watermark.
  // Requires the lock.
  virtual Result<OpenedRun> open_run(const TableKey& table, RunTrigger trigger) = 0;
  // Moves the watermark alone (a run that read nothing but learned a later
  // hi), compare-and-set on `expected`. Fails, changing nothing, when the
  // stored value is not `expected` or the lock is no longer held.
  virtual Status move_watermark(const TableKey& table, RunId run, const std::optional<CursorValue>& expected,
                                const CursorValue& next) = 0;
  // Records the end of the run; best effort on an already failing path.
  virtual Status finish_run(RunId run, const RunEnd& end) = 0;

  // Integer cursors: the (source clock, max cursor) observations earlier
  // runs kept. `source` names what they were taken of (source connection,
  // table, cursor); observations of anything else are not returned.
  virtual Result<std::vector<CursorSample>> read_cursor_samples(const TableKey& table, const std::string& source) = 0;
  // Forgets the observations taken before `forget_before` (and any of
  // another source) and keeps `add`. Requires the table's lock.
  virtual Status save_cursor_samples(const TableKey& table, const std::string& source,
                                     std::optional<SourceMicros> forget_before,
                                     const std::optional<CursorSample>& add) = 0;

  // Partition tables. A partition's own advisory lock, taken by scheduled
  // runs and backfills alike; `wait` blocks (bounded by the store's lock
  // timeout) instead of returning false.
  virtual Result<bool> lock_partition(const TableKey& table, const TimeWindow& partition, bool wait) = 0;
  virtual void unlock_partition(const TableKey& table, const TimeWindow& partition) = 0;
  // hi of the latest partition marked done; nothing when none is.
  virtual Result<std::optional<Instant>> last_done_partition(const TableKey& table) = 0;
  // lo of every partition marked done that starts in [from, to).
  virtual Result<std::vector<Instant>> done_partitions(const TableKey& table, Instant from, Instant to) = 0;
  // Records a failed partition unless it is already done (its old rows stand).
  virtual Status mark_partition_failed(const TableKey& table, const TimeWindow& partition, RunId run) = 0;
};

// What the source says about a table before its run.
struct SourceTable {
  CursorType cursor_type = CursorType::TimestampTz;
  bool cursor_nullable = true;  // false when the column is NOT NULL
  std::vector<std::string> columns;  // copied, in order
};

class Source {
 public:
  virtual ~Source() = default;
  // Cursor type and the columns to copy (the configured ones, else all).
  // Fails when the table or a column is missing.
  virtual Result<SourceTable> inspect(const TableConfig& table) = 0;
  // What the safe horizon is decided from (core/safe_horizon.h): the
  // source's clock, for integer cursors max(cursor) read just before it,
  // and the oldest transaction still open that may write. On a standby
  // with a primary, read on the primary, and returns only once the
  // standby has replayed past that moment (fails after replay_timeout).
  virtual Result<HorizonReading> read_horizon(const TableConfig& table, CursorType type) = 0;
  // An instant on the source's clock in a time cursor's type: a timestamp
  // or date in the source session's time zone.
  virtual Result<CursorValue> cursor_at(SourceMicros instant, CursorType type) = 0;
  // Rows whose cursor is NULL: no window ever includes them.
  virtual Result<std::int64_t> null_cursor_rows(const TableConfig& table) = 0;
  // min(cursor), for a first load without `initial`; nothing when empty.
  virtual Result<std::optional<CursorValue>> lower_bound(const TableConfig& table, CursorType type) = 0;
};

struct ChunkRequest {
  TableKey table;
  RunId run = 0;
  Window window;
  std::optional<CursorValue> watermark_before;  // compare-and-set expects this
  CursorValue watermark_after;
  // False for a backfill re-read: the rows are written, the watermark stays.
  bool move_watermark = true;
};

struct ChunkCounts {
  std::int64_t rows_read = 0;
  std::int64_t rows_written = 0;
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

class Target {
 public:
  virtual ~Target() = default;
  // Checks the target table: it exists, has every column, and a unique
  // index on exactly the key. The message names the table.
  virtual Status check(const TableConfig& table, const SourceTable& source) = 0;
  // Copies the window's rows from the source, upserts them on the key and
  // moves the watermark by compare-and-set, in one transaction when the
  // state lives in the target database (else: load commits, then state).
  // On failure nothing after the last commit holds.
  virtual Result<ChunkCounts> load_chunk(const TableConfig& table, const SourceTable& source,
                                         const ChunkRequest& request) = 0;
  // Replaces one partition in one transaction: deletes the target's rows in
  // the window, inserts the query's rows (run on the source with $1 = lo,
  // $2 = hi), marks the partition done. Touches nothing outside the window.
  virtual Result<ChunkCounts> write_partition(const TableConfig& table, const PartitionRequest& request) = 0;
};

}  // namespace tidemark
