// tidemark.runs, one row per run: the one owner of what a row says. The
// words its status, trigger and error_kind columns hold (its kind's are
// the job-kind table's, core/schedule/job_kinds.h), and the texts of the statements over the rows
// (PgStateStore's, StateReader's, the history's pruning) spelled with
// those words. Constants and free functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "core/run/run_ports.h"
#include "core/schedule/job_kinds.h"

namespace tidemark {

// status (SPEC §5): a run is `running` until it ends `success` or `failed`.
enum class RunRowStatus { Running, Success, Failed };
std::string_view run_row_status_word(RunRowStatus status);

// A column's value that may be missing, as JSON: null when it is.
template <typename T>
nlohmann::json column_value(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json();
}

// A run's start and its end as the run row's columns, by name: one JSON
// object each, which a statement reads with jsonb_to_record(set) and the
// column list {start_columns} or {end_columns} (below). The start's:
// pipeline, table_name, trigger, kind; the end's: status, error,
// error_kind, window_lo, window_hi, watermark_after, rows_read,
// rows_written, the horizon's (horizon_lag_seconds, horizon_held_by,
// watermark_ahead, null_cursor_rows, infinite_cursor_rows),
// schema_drift, a reconcile's rows_deleted, rows_missing and
// rows_changed, a watched load's source_changes and unseen_changes, an
// input's wait (input_wait_seconds) and a partition's rewrite_reason.
nlohmann::json run_start_columns(const RunStart& start);
nlohmann::json run_end_columns(const RunEnd& end);

// What the runs table has: every column the reads name (state schema 16),
// its kind column (15), or neither. A newer `status` reads a schema the
// daemon has not upgraded yet: a run's kind is then told by its trigger,
// and its later columns read through to_jsonb (absent ones as null).
enum class RunsSchema { Current, WithKind, BeforeKind };
RunsSchema runs_schema_at(int state_schema_version);

// `sql` with each mark replaced: a word's by that word as a quoted
// literal, {running} {success} {failed} (status), {load} {reconcile}
// (kind), {transient} (error_kind); {is_load} and {is_reconcile} by a
// condition on a run row's columns (kind, or before it trigger, per
// `schema`), to be written after the row's alias and a dot; {r.NAME} by
// run row r's column NAME, directly on a Current schema, else as text
// through to_jsonb (null where the column is missing; cast it after);
// {start_columns} and {end_columns} by
// the names and types of the columns of run_start_columns and
// run_end_columns, for jsonb_to_record's column list; for the end's
// record read as `e` into a row `r`: {end_names} by its columns' names and
// {end_values} by their values (an insert's), {end_assignments} by
// `column = value` for each (an update's: a window, a watermark and a
// reconcile's counts the end leaves out keep what the steps recorded). Literals rather
// than parameters: a partial index (`where status = 'success'`) serves
// only a statement that names the same constant. Other text is left as
// it is.
std::string run_row_sql(std::string_view sql, RunsSchema schema = RunsSchema::WithKind);

// A reader's statement spelled by run_row_sql for each RunsSchema once,
// the one a schema needs picked at each use. Immutable; thread-safe.
class RunRowStatement {
 public:
  explicit RunRowStatement(std::string_view sql)
      : current_(run_row_sql(sql, RunsSchema::Current)),
        with_kind_(run_row_sql(sql, RunsSchema::WithKind)),
        before_kind_(run_row_sql(sql, RunsSchema::BeforeKind)) {}
  const std::string& operator()(RunsSchema schema) const {
    switch (schema) {
      case RunsSchema::Current: return current_;
      case RunsSchema::WithKind: return with_kind_;
      case RunsSchema::BeforeKind: break;
    }
    return before_kind_;
  }

 private:
  std::string current_;
  std::string with_kind_;
  std::string before_kind_;
};

// One batch of the history's pruning (RunHistoryPruner): $1 the retention
// as an interval, $2 the last run_id of the batch before (0 at first),
// $3 the batch's size in rows. Returns one row: held (this member took
// the pruning lock), deleted (rows removed), last_run_id (the batch's
// last run, 0 when it was empty) and reached (the batch reached a run
// inside the retention, or the end).
const std::string& prune_batch_sql();

}  // namespace tidemark
