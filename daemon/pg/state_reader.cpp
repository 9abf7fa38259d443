#include "daemon/pg/state_reader.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/watermark/cursor_value.h"
#include "core/time/instant_text.h"

namespace tidemark {
namespace {

std::optional<std::int64_t> optional_integer(const PgResult& r, int row, int column) {
  if (r.is_null(row, column)) return std::nullopt;
  return r.integer(row, column);
}

std::optional<double> optional_double(const PgResult& r, int row, int column) {
  if (r.is_null(row, column)) return std::nullopt;
  return std::stod(r.text(row, column));
}

// A stored watermark as an instant; nothing for integer cursors and for
// text that does not parse as its type (status still shows the text).
std::optional<double> stored_unix_seconds(const std::string& value_type, const std::string& value) {
  const auto parsed = cursor_from_stored(value_type, value);
  if (!parsed) return std::nullopt;
  return cursor_unix_seconds(*parsed);
}

// The one place a partition table's "watermark" is made: it stores none,
// and what its done partitions claim is everything before the end of the
// last one. A stored watermark, when a table has one, wins.
void apply_watermark(TableState& state, const std::optional<std::string>& stored_value,
                     const std::optional<std::string>& stored_type, std::optional<double> stored_moved_at,
                     std::optional<double> last_partition_hi, std::optional<double> partitions_moved_at) {
  if (stored_value) {
    state.watermark = stored_value;
    state.value_type = stored_type;
    state.moved_at = stored_moved_at;
    if (stored_type) state.watermark_unix = stored_unix_seconds(*stored_type, *stored_value);
    return;
  }
  if (!last_partition_hi) return;
  const auto end = static_cast<std::int64_t>(std::llround(*last_partition_hi));
  state.watermark = format_instant(Instant(std::chrono::seconds(end)));
  state.value_type = std::string(cursor_type_name(CursorType::TimestampTz));
  state.watermark_unix = static_cast<double>(end);
  state.moved_at = partitions_moved_at;
}

// The tables asked ($1: a JSON array of [pipeline, table]) in their order,
// and each table's partitions done (p), as table_states and table_moves
// read them.
#define TIDEMARK_ASKED_TABLES                                                    \
  " select item ->> 0 as pipeline, item ->> 1 as table_name, position" \
  " from json_array_elements($1::json) with ordinality as t(item, position)"
#define TIDEMARK_DONE_PARTITIONS                                                                                         \
  " left join lateral (select max(partition_hi) as partition_hi, max(updated_at) as moved_at"                  \
  " from tidemark.partitions where pipeline = a.pipeline and table_name = a.table_name and status = 'done') p" \
  " on true "

nlohmann::json asked_tables(const std::vector<TableKey>& tables) {
  nlohmann::json asked = nlohmann::json::array();
  for (const TableKey& t : tables) asked.push_back({t.pipeline, t.table});
  return asked;
}

}  // namespace

WatermarkReading TableState::reading() const {
  WatermarkReading out;
  out.watermark_unix = watermark_unix;
  out.moved_unix = moved_at;
  out.ahead_of_source = ahead_of_source;
  return out;
}

TableRunFacts TableState::run_facts() const {
  TableRunFacts out;
  out.any_run = last_run.has_value();
  out.last_failed = last_finished_failed;
  out.failures = failures_since_success;
  out.failing_since = failing_since;
  out.last_error = last_finished_error.value_or("");
  out.last_error_kind = last_finished_error_kind;
  out.last_success_at = last_success_at;
  out.horizon_lag_seconds = horizon_lag_seconds;
  out.horizon_held_by = horizon_held_by.value_or("");
  if (last_reconcile) {
    out.reconcile_missing = last_reconcile->missing;
    out.reconcile_at = last_reconcile->finished_at;
  }
  out.reconcile_failed = last_reconcile_failed;
  out.reconcile_failed_at = last_reconcile_failed_at;
  out.reconcile_error = last_reconcile_error.value_or("");
  out.schema_drift = schema_drift.value_or("");
  out.unseen_changes = unseen_changes;
  return out;
}

Result<bool> StateReader::schema_exists() {
  try {
    return connection_.exec("select to_regclass('tidemark.runs') is not null").boolean(0, 0);
  } catch (const PgError& e) {
    return e.as_error();
  }
}

Result<TableStatesReading> StateReader::table_states(const std::vector<TableKey>& tables) {
  try {
    const nlohmann::json asked = asked_tables(tables);
    // The left join from one row keeps the clock when no table is asked.
    // error_kind and schema_drift are read through to_jsonb: a schema at
    // an older version (a new binary's `status` before the daemon upgraded
    // it) has no such column, and its runs simply have no kind or drift;
    // so are a reconcile's counts (version 6). Reconciles are runs of
    // their own: the latest run, the last success and the failures are
    // the loads'.
    const PgResult r = connection_.exec_prepared("with asked as (" TIDEMARK_ASKED_TABLES ")" R"SQL(
select a.pipeline, a.table_name, w.value, w.value_type, extract(epoch from w.moved_at)::float8,
       l.run_id, l.status, extract(epoch from l.started_at)::float8, extract(epoch from l.finished_at)::float8,
       l.rows_written, l.error,
       f.horizon_lag_seconds, f.horizon_held_by, f.watermark_ahead, f.null_cursor_rows,
       extract(epoch from s.finished_at)::float8,
       extract(epoch from p.partition_hi)::float8, extract(epoch from p.moved_at)::float8,
       extract(epoch from now())::float8,
       f.status, f.error, f.error_kind, x.failures, extract(epoch from x.since)::float8, f.schema_drift,
       rc.rows_deleted, rc.rows_missing, extract(epoch from rc.finished_at)::float8,
       rl.status, rl.error, extract(epoch from rl.finished_at)::float8, f.infinite_cursor_rows, rc.rows_changed,
       case when f.run_id < coalesce(rc.run_id, 0) then 0 else f.unseen_changes end
from (select 1) one left join asked a on true
left join tidemark.watermarks w on w.pipeline = a.pipeline and w.table_name = a.table_name
left join lateral (select run_id, status, started_at, finished_at, rows_written, error from tidemark.runs r
                   where r.pipeline = a.pipeline and r.table_name = a.table_name and r.trigger <> 'reconcile'
                   order by run_id desc limit 1) l on true
left join lateral (select horizon_lag_seconds, horizon_held_by, watermark_ahead, null_cursor_rows,
                          status, error, to_jsonb(r) ->> 'error_kind' as error_kind,
                          to_jsonb(r) ->> 'schema_drift' as schema_drift,
                          (to_jsonb(r) ->> 'infinite_cursor_rows')::bigint as infinite_cursor_rows,
                          (to_jsonb(r) ->> 'unseen_changes')::bigint as unseen_changes, run_id
                   from tidemark.runs r
                   where r.pipeline = a.pipeline and r.table_name = a.table_name and r.status <> 'running'
                         and r.trigger <> 'reconcile'
                   order by run_id desc limit 1) f on true
left join lateral (select run_id, finished_at from tidemark.runs r
                   where r.pipeline = a.pipeline and r.table_name = a.table_name and r.status = 'success'
                         and r.trigger <> 'reconcile'
                   order by run_id desc limit 1) s on true
left join lateral (select count(*) as failures, min(finished_at) as since from tidemark.runs r
                   where r.pipeline = a.pipeline and r.table_name = a.table_name and r.status = 'failed'
                         and r.trigger <> 'reconcile' and r.run_id > coalesce(s.run_id, 0)) x on true
left join lateral (select (to_jsonb(r) ->> 'rows_deleted')::bigint as rows_deleted,
                          (to_jsonb(r) ->> 'rows_missing')::bigint as rows_missing,
                          (to_jsonb(r) ->> 'rows_changed')::bigint as rows_changed, finished_at, run_id
                   from tidemark.runs r
                   where r.pipeline = a.pipeline and r.table_name = a.table_name and r.status = 'success'
                         and r.trigger = 'reconcile'
                   order by run_id desc limit 1) rc on true
left join lateral (select status, error, finished_at from tidemark.runs r
                   where r.pipeline = a.pipeline and r.table_name = a.table_name and r.status <> 'running'
                         and r.trigger = 'reconcile'
                   order by run_id desc limit 1) rl on true
)SQL" TIDEMARK_DONE_PARTITIONS R"SQL(
order by a.position
)SQL",
                                        {asked.dump()});
    TableStatesReading out;
    out.now = std::stod(r.text(0, 18));
    for (int i = 0; i < r.rows(); ++i) {
      if (r.is_null(i, 0)) continue;  // the clock's row when no table was asked
      TableState s;
      s.table = TableKey{r.text(i, 0), r.text(i, 1)};
      apply_watermark(s, r.optional_text(i, 2), r.optional_text(i, 3), optional_double(r, i, 4),
                      optional_double(r, i, 16), optional_double(r, i, 17));
      if (!r.is_null(i, 5)) {
        LatestRun run;
        run.run_id = r.integer(i, 5);
        run.status = r.text(i, 6);
        run.started_at = std::stod(r.text(i, 7));
        run.finished_at = optional_double(r, i, 8);
        run.rows_written = optional_integer(r, i, 9).value_or(0);
        run.error = r.optional_text(i, 10);
        s.last_run = run;
      }
      s.horizon_lag_seconds = optional_double(r, i, 11);
      s.horizon_held_by = r.optional_text(i, 12);
      s.ahead_of_source = !r.is_null(i, 13) && r.boolean(i, 13);
      s.null_cursor_rows = optional_integer(r, i, 14);
      s.infinite_cursor_rows = optional_integer(r, i, 31);
      s.last_success_at = optional_double(r, i, 15);
      s.last_finished_failed = !r.is_null(i, 19) && r.text(i, 19) == "failed";
      s.last_finished_error = r.optional_text(i, 20);
      if (!r.is_null(i, 21)) {
        s.last_finished_error_kind = error_kind_named(r.text(i, 21));
      }
      s.failures_since_success = optional_integer(r, i, 22).value_or(0);
      s.failing_since = optional_double(r, i, 23);
      s.schema_drift = r.optional_text(i, 24);
      if (!r.is_null(i, 27)) {
        s.last_reconcile = ReconcileState{optional_integer(r, i, 25).value_or(0), optional_integer(r, i, 26).value_or(0),
                                          optional_integer(r, i, 32).value_or(0), std::stod(r.text(i, 27))};
      }
      s.unseen_changes = optional_integer(r, i, 33);
      if (!r.is_null(i, 28) && r.text(i, 28) == "failed") {
        s.last_reconcile_failed = true;
        s.last_reconcile_error = r.optional_text(i, 29);
        s.last_reconcile_failed_at = optional_double(r, i, 30);
      }
      out.tables.push_back(std::move(s));
    }
    return out;
  } catch (const PgError& e) {
    return e.as_error();
  }
}

Result<MovesSnapshot> StateReader::table_moves(const std::vector<TableKey>& tables) {
  try {
    const nlohmann::json asked = asked_tables(tables);
    // The parts of table_states a load changes, each found as it finds them.
    const PgResult r = connection_.exec_prepared("with asked as (" TIDEMARK_ASKED_TABLES ")" R"SQL(
select a.pipeline, a.table_name, w.value, w.value_type, extract(epoch from w.moved_at)::float8,
       (select extract(epoch from r.finished_at)::float8 from tidemark.runs r
        where r.pipeline = a.pipeline and r.table_name = a.table_name and r.status = 'success'
              and r.trigger <> 'reconcile'
        order by run_id desc limit 1),
       extract(epoch from p.partition_hi)::float8, extract(epoch from p.moved_at)::float8,
       extract(epoch from now())::float8
from (select 1) one left join asked a on true
left join tidemark.watermarks w on w.pipeline = a.pipeline and w.table_name = a.table_name
)SQL" TIDEMARK_DONE_PARTITIONS R"SQL(
order by a.position
)SQL",
                                                 {asked.dump()});
    MovesSnapshot out;
    out.now = std::stod(r.text(0, 8));
    for (int i = 0; i < r.rows(); ++i) {
      if (r.is_null(i, 0)) continue;  // the clock's row when no table was asked
      TableState s;
      apply_watermark(s, r.optional_text(i, 2), r.optional_text(i, 3), optional_double(r, i, 4),
                      optional_double(r, i, 6), optional_double(r, i, 7));
      out.tables.push_back(TableMoves{TableKey{r.text(i, 0), r.text(i, 1)}, s.watermark_unix, s.moved_at,
                                      optional_double(r, i, 5)});
    }
    return out;
  } catch (const PgError& e) {
    return e.as_error();
  }
}

Result<std::int64_t> StateReader::schema_bytes() {
  try {
    return connection_.exec(
                          "select coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint from pg_class c "
                          "where c.relnamespace = 'tidemark'::regnamespace and c.relkind in ('r', 'm', 'p')")
        .integer(0, 0);
  } catch (const PgError& e) {
    return e.as_error();
  }
}

Result<std::optional<std::string>> StateReader::stored_watermark(const TableKey& table) {
  try {
    const PgResult r = connection_.exec(
        "select value from tidemark.watermarks where pipeline = $1 and table_name = $2", {table.pipeline, table.table});
    if (r.rows() == 0) return std::optional<std::string>();
    return r.optional_text(0, 0);
  } catch (const PgError& e) {
    return e.as_error();
  }
}

Result<std::vector<RunRecord>> StateReader::recent_runs(const std::optional<std::string>& pipeline,
                                                        std::int64_t limit) {
  try {
    const PgResult r = connection_.exec(
        "select run_id, pipeline, table_name, trigger, status,"
        " to_char(started_at at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
        " extract(epoch from finished_at - started_at)::numeric(12,3)::text,"
        " window_lo, window_hi, watermark_before, watermark_after, rows_read, rows_written, error, host, pid,"
        " to_jsonb(runs) ->> 'error_kind',"  // as in table_states: version 2 has no such column
        " (to_jsonb(runs) ->> 'rows_deleted')::bigint, (to_jsonb(runs) ->> 'rows_missing')::bigint,"
        " (to_jsonb(runs) ->> 'rows_changed')::bigint, (to_jsonb(runs) ->> 'unseen_changes')::bigint"
        " from tidemark.runs where ($1::text is null or pipeline = $1) order by run_id desc limit $2",
        {pipeline, std::to_string(limit)});
    std::vector<RunRecord> out;
    for (int i = 0; i < r.rows(); ++i) {
      RunRecord run;
      run.run_id = r.integer(i, 0);
      run.pipeline = r.text(i, 1);
      run.table = r.text(i, 2);
      run.trigger = r.text(i, 3);
      run.status = r.text(i, 4);
      run.started_at = r.text(i, 5);
      run.duration_seconds = optional_double(r, i, 6);
      run.window_lo = r.optional_text(i, 7);
      run.window_hi = r.optional_text(i, 8);
      run.watermark_before = r.optional_text(i, 9);
      run.watermark_after = r.optional_text(i, 10);
      run.rows_read = r.integer(i, 11);
      run.rows_written = r.integer(i, 12);
      run.error = r.optional_text(i, 13);
      run.host = r.optional_text(i, 14);
      run.pid = optional_integer(r, i, 15);
      run.error_kind = r.optional_text(i, 16);
      run.rows_deleted = optional_integer(r, i, 17);
      run.rows_missing = optional_integer(r, i, 18);
      run.rows_changed = optional_integer(r, i, 19);
      run.unseen_changes = optional_integer(r, i, 20);
      out.push_back(std::move(run));
    }
    return out;
  } catch (const PgError& e) {
    return e.as_error();
  }
}

std::vector<TableKey> configured_tables(const Config& config) {
  std::vector<TableKey> out;
  for (const PipelineConfig& p : config.pipelines) {
    for (const TableConfig& t : p.tables) out.push_back({p.name, t.name});
  }
  return out;
}

Result<LastStarts> StateReader::last_run_starts(const std::vector<TableKey>& tables) {
  try {
    const nlohmann::json asked = asked_tables(tables);
    // The newest run by run_id is the newest started: both come from the
    // state database, in the statement that writes the run's row. Its
    // firing (scheduled_for, a whole second) is what the schedule
    // compares with; a run without one (from the command line, or older)
    // by its start, cut to the second, never rounded up: a run that began
    // at 8.6 s must not hide a firing at 9 s.
    // A load's and a reconcile's, each the newest of its own kind; for a
    // reconcile the newest that succeeded, when one did: a reconcile cut
    // off by a stop (a deploy in the night) or failing is not done, and a
    // firing since its last success runs it once at start-up.
    const PgResult r = connection_.exec(R"SQL(
with asked as (
  select item ->> 0 as pipeline, item ->> 1 as table_name from json_array_elements($1::json) item)
select a.pipeline, a.table_name, false, coalesce(extract(epoch from l.scheduled_for), floor(extract(epoch from l.started_at)))::bigint
from asked a
cross join lateral (select started_at, scheduled_for from tidemark.runs r
                    where r.pipeline = a.pipeline and r.table_name = a.table_name
                          and r.trigger not in ('backfill', 'reconcile')
                    order by run_id desc limit 1) l
union all
select a.pipeline, a.table_name, true, extract(epoch from c.started_at)::bigint
from asked a
cross join lateral (select coalesce(
                      (select coalesce(scheduled_for, date_trunc('second', started_at)) from tidemark.runs r
                       where r.pipeline = a.pipeline and r.table_name = a.table_name and r.trigger = 'reconcile'
                             and r.status = 'success'
                       order by run_id desc limit 1),
                      (select coalesce(scheduled_for, date_trunc('second', started_at)) from tidemark.runs r
                       where r.pipeline = a.pipeline and r.table_name = a.table_name and r.trigger = 'reconcile'
                       order by run_id desc limit 1)) as started_at) c
where c.started_at is not null
)SQL",
                                        {asked.dump()});
    LastStarts out;
    for (int i = 0; i < r.rows(); ++i) {
      const JobKind kind = r.boolean(i, 2) ? JobKind::Reconcile : JobKind::Load;
      out[JobKey{TableKey{r.text(i, 0), r.text(i, 1)}, kind}] = Instant(std::chrono::seconds(r.integer(i, 3)));
    }
    return out;
  } catch (const PgError& e) {
    return e.as_error();
  }
}

}  // namespace tidemark
