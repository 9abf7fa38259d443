// The read side of the state schema: every query the commands and the
// daemon make of tidemark.* besides a run's own (PgStateStore) goes
// through here, and comes back as plain values. It owns no connection and
// takes no lock; it reads with the one it is given. Used by one thread at
// a time, like that connection.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/config/config_model.h"
#include "core/result.h"
#include "core/run/table_key.h"
#include "core/schedule/job_kind.h"
#include "core/time/time_types.h"
#include "core/watermark/table_reason.h"
#include "core/watermark/watermark_health.h"
#include "daemon/pg/libpq/pg_connection.h"
#include "daemon/pg/state/runs_table.h"

namespace tidemark {

// A table's latest run, finished or not. Times are Unix seconds on the
// state database's clock.
struct LatestRun {
  std::int64_t run_id = 0;
  std::string status;
  double started_at = 0;
  std::optional<double> finished_at;
  std::int64_t rows_written = 0;
  std::optional<std::string> error;
};

// A table's latest successful reconcile.
struct ReconcileState {
  std::int64_t deleted = 0;
  std::int64_t missing = 0;
  std::int64_t changed = 0;
  double finished_at = 0;  // Unix seconds
};

// One table as the state database has it. Times are Unix seconds on the
// state database's clock.
struct TableState {
  TableKey table;
  // The stored watermark's text and type; for a partition table, which
  // stores none, the end of its last done partition ("timestamptz").
  std::optional<std::string> watermark;
  std::optional<std::string> value_type;
  // The watermark as an instant: nothing for integer cursors (or a value
  // that does not parse as its type).
  std::optional<double> watermark_unix;
  // When the watermark last moved; for a partition table, when a
  // partition was last marked done.
  std::optional<double> moved_at;
  std::optional<LatestRun> last_run;
  std::optional<double> last_success_at;  // when the latest successful run finished
  // From the latest finished run: what its safe horizon was made of.
  std::optional<double> horizon_lag_seconds;
  std::optional<std::string> horizon_held_by;
  // ... and how long an input has held back a complete partition, up to
  // now (version 16; nothing for runs before it, or when none was held).
  std::optional<double> input_wait_seconds;
  bool ahead_of_source = false;
  std::optional<std::int64_t> null_cursor_rows;
  std::optional<std::int64_t> infinite_cursor_rows;
  // The latest finished run failed, with this error and kind (no kind for
  // runs recorded before state schema version 3).
  bool last_finished_failed = false;
  std::optional<std::string> last_finished_error;
  std::optional<ErrorKind> last_finished_error_kind;
  // Failed runs since the latest success (all of them when none), and
  // when the first of them ended.
  std::int64_t failures_since_success = 0;
  std::optional<double> failing_since;
  std::optional<ReconcileState> last_reconcile;  // the latest successful reconcile
  // The latest finished reconcile failed, when, and with this error.
  bool last_reconcile_failed = false;
  std::optional<double> last_reconcile_failed_at;
  std::optional<std::string> last_reconcile_error;
  // The schema drift the latest finished run found: "" when none, the
  // changes when it drifted; nothing when it did not compare columns (a
  // partition table, a run that failed first, or one recorded before
  // state schema version 5).
  std::optional<std::string> schema_drift;
  // Updates and deletes the table's insert-only cursor could not see, as
  // its latest finished load counted them (0 once a reconcile succeeded
  // after it); nothing when that load did not watch (core/run/change_watch.h).
  std::optional<std::int64_t> unseen_changes;

  // Whether the table's latest reconcile failed and still counts: only
  // for a table that reconciles (deletes:). A failure of a reconcile the
  // configuration no longer has is nobody's to clear.
  bool reconcile_failing(const TableConfig& configured) const {
    return last_reconcile_failed && configured.deletes.has_value();
  }

  // What age and stale are judged from (core/watermark_health.h).
  WatermarkReading reading() const;
  // What the reason a table is stale or failing is judged from
  // (core/watermark/table_reason.h).
  TableRunFacts run_facts() const;
};

// Every asked table's state, and the state database's clock read in the
// same statement, so that ages are measured on the clock the state was
// written with.
struct TableStatesReading {
  double now = 0;  // Unix seconds
  std::vector<TableState> tables;  // in the order asked
};

// What a load changes of a table's gauges: its watermark (or its
// partitions'), when that moved, and its last success; with the state
// database's clock read in the same statement.
struct TableMoves {
  TableKey table;
  std::optional<double> watermark_unix;
  std::optional<double> moved_at;
  std::optional<double> last_success_at;
};

struct MovesSnapshot {
  double now = 0;  // Unix seconds
  std::vector<TableMoves> tables;  // in the order asked
};

// One row of tidemark.runs, as `tidemark history` shows it.
struct RunRecord {
  std::int64_t run_id = 0;
  std::string pipeline;
  std::string table;
  std::string trigger;
  std::string status;
  std::string started_at;  // ISO-8601, UTC, whole seconds
  std::optional<double> duration_seconds;  // to the millisecond; nothing while running
  std::optional<std::string> window_lo;
  std::optional<std::string> window_hi;
  std::optional<std::string> watermark_before;
  std::optional<std::string> watermark_after;
  std::int64_t rows_read = 0;
  std::int64_t rows_written = 0;
  std::optional<std::string> error;
  // "transient" or "permanent" for a failed run; nothing for a success
  // and for runs recorded before state schema version 3.
  std::optional<std::string> error_kind;
  std::optional<std::string> host;
  std::optional<std::int64_t> pid;
  // A reconcile's counts (state schema version 6); nothing for other runs.
  std::optional<std::int64_t> rows_deleted;
  std::optional<std::int64_t> rows_missing;
  std::optional<std::int64_t> rows_changed;
  std::optional<std::int64_t> unseen_changes;  // updates and deletes the load's cursor could not see
  // Why a partition done before was written again (state schema version
  // 16), and what held the run's horizon back.
  std::optional<std::string> rewrite_reason;
  std::optional<std::string> held_by;
};

// Which runs `history` shows; nothing in a field keeps every run.
struct RunFilter {
  std::optional<std::string> pipeline;
  std::optional<std::string> table_glob;  // core/text/glob.h
  std::optional<std::string> status;      // running, success or failed
};

// Every table of `config`, in its order: what the reads below are asked.
std::vector<TableKey> configured_tables(const Config& config);

class StateReader {
 public:
  explicit StateReader(PgConnection& connection) : connection_(connection) {}

  // Whether the state schema exists; read-only commands then report an
  // empty state instead of creating it. Fails when the query does.
  Result<bool> schema_exists();

  // One statement: each table's watermark (or its partitions'), latest
  // run, latest finished run, latest success, the failures since it, and
  // the database's clock. Each lookup probes one index (state schema
  // version 4 has those of the last success, the failures and the latest
  // partition), so the cost follows the tables asked and their failures
  // since their last success, not the length of the history. One state
  // per table asked, in the order asked. Requires the schema. Fails when
  // the query does.
  Result<TableStatesReading> table_states(const std::vector<TableKey>& tables);
  // One statement, a few index probes a table: what a load changed of
  // each table's gauges (TableMoves), for the tables that have just run.
  Result<MovesSnapshot> table_moves(const std::vector<TableKey>& tables);

  // Disk used by the tidemark schema: its tables with their indexes and
  // TOAST. Requires the schema. Fails when the query does.
  Result<std::int64_t> schema_bytes();

  // The table's stored watermark as text, as it is, even when it does not
  // parse as its type (a rewind is how such a value is replaced); nothing
  // when none is stored. Requires the schema. Fails when the query does.
  Result<std::optional<std::string>> stored_watermark(const TableKey& table);

  // The newest `limit` runs the filter keeps, newest first. Requires the
  // schema. Fails when the query does.
  Result<std::vector<RunRecord>> recent_runs(const RunFilter& filter, std::int64_t limit);

  // When each of `tables` last started a run, backfills and reconciles
  // apart (they do not stand for a firing of its load), or was resumed
  // without --catch-up, when later: what serve catches missed firings up from.
  // One index probe per table, however long the history. Tables that
  // never ran are absent. Requires the schema. Fails when the query does.
  Result<LastStarts> last_run_starts(const std::vector<TableKey>& tables);

 private:
  // Whether the runs table has its kind column, read once per reader
  // (a new binary's `status` may read a schema not upgraded yet). Throws PgError.
  RunsSchema runs_schema();

  PgConnection& connection_;
  std::optional<RunsSchema> runs_schema_;
};

}  // namespace tidemark
