#include "daemon/pg/state/state_reader.h"

#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "core/text/glob.h"
#include "core/time/instant_text.h"
#include "core/watermark/cursor_value.h"
#include "daemon/pg/libpq/json_parameter.h"
#include "daemon/pg/libpq/result_columns.h"
#include "daemon/pg/state/pause_book.h"
#include "daemon/pg/state/runs_table.h"
#include "daemon/pg/state/table_keys_json.h"
#include "daemon/pg/state/state_schema.h"

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
  out.input_wait_seconds = input_wait_seconds;
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
  return as_result([&] { return connection_.exec("select to_regclass('tidemark.runs') is not null").boolean(0, 0); });
}

Result<TableStatesReading> StateReader::table_states(const std::vector<TableKey>& tables) {
  return as_result([&] {
    const nlohmann::json asked = table_keys_json(tables);
    // The left join from one row keeps the clock when no table is asked.
    // The later columns ({r.NAME}: error_kind, schema_drift, a reconcile's
    // counts, ...) are read through to_jsonb from a schema at an older
    // version (a new binary's `status` before the daemon upgraded it),
    // whose runs simply have none of them; directly from a current one.
    // Reconciles are runs of their own: the latest run, the last success
    // and the failures are the loads'.
    static const std::string_view text = "with asked as (" TIDEMARK_ASKED_TABLES ")" R"SQL(
select a.pipeline, a.table_name, w.value, w.value_type, extract(epoch from w.moved_at)::float8 as moved_at,
       l.run_id as last_run_id, l.status as last_status, extract(epoch from l.started_at)::float8 as last_started_at,
       extract(epoch from l.finished_at)::float8 as last_finished_at, l.rows_written as last_rows_written,
       l.error as last_error,
       f.horizon_lag_seconds, f.horizon_held_by, f.input_wait_seconds, f.watermark_ahead, f.null_cursor_rows,
       f.infinite_cursor_rows,
       extract(epoch from s.finished_at)::float8 as success_at,
       extract(epoch from p.partition_hi)::float8 as partition_hi, extract(epoch from p.moved_at)::float8 as partition_moved_at,
       extract(epoch from now())::float8 as now,
       f.status as finished_status, f.error as finished_error, f.error_kind as finished_error_kind,
       x.failures, extract(epoch from x.since)::float8 as failing_since, f.schema_drift,
       rc.rows_deleted, rc.rows_missing, rc.rows_changed, extract(epoch from rc.finished_at)::float8 as reconciled_at,
       rl.status as reconcile_status, rl.error as reconcile_error,
       extract(epoch from rl.finished_at)::float8 as reconcile_finished_at,
       case when f.run_id < coalesce(rc.run_id, 0) then 0 else f.unseen_changes end as unseen_changes
from (select 1) one left join asked a on true
left join tidemark.watermarks w on w.pipeline = a.pipeline and w.table_name = a.table_name
left join lateral (select run_id, status, started_at, finished_at, rows_written, error from tidemark.runs r
                   where r.pipeline = a.pipeline and r.table_name = a.table_name and r.{is_load}
                   order by run_id desc limit 1) l on true
left join lateral (select horizon_lag_seconds, horizon_held_by, watermark_ahead, null_cursor_rows,
                          status, error, {r.error_kind} as error_kind,
                          {r.schema_drift} as schema_drift,
                          {r.infinite_cursor_rows}::bigint as infinite_cursor_rows,
                          {r.unseen_changes}::bigint as unseen_changes,
                          {r.input_wait_seconds}::float8
                            + extract(epoch from now() - r.finished_at)::float8 as input_wait_seconds, run_id
                   from tidemark.runs r
                   where r.pipeline = a.pipeline and r.table_name = a.table_name and r.status <> {running}
                         and r.{is_load}
                   order by run_id desc limit 1) f on true
left join lateral (select run_id, finished_at from tidemark.runs r
                   where r.pipeline = a.pipeline and r.table_name = a.table_name and r.status = {success}
                         and r.{is_load}
                   order by run_id desc limit 1) s on true
left join lateral (select count(*) as failures, min(finished_at) as since from tidemark.runs r
                   where r.pipeline = a.pipeline and r.table_name = a.table_name and r.status = {failed}
                         and r.{is_load} and r.run_id > coalesce(s.run_id, 0)) x on true
left join lateral (select {r.rows_deleted}::bigint as rows_deleted,
                          {r.rows_missing}::bigint as rows_missing,
                          {r.rows_changed}::bigint as rows_changed, finished_at, run_id
                   from tidemark.runs r
                   where r.pipeline = a.pipeline and r.table_name = a.table_name and r.status = {success}
                         and r.{is_reconcile}
                   order by run_id desc limit 1) rc on true
left join lateral (select status, error, finished_at from tidemark.runs r
                   where r.pipeline = a.pipeline and r.table_name = a.table_name and r.status <> {running}
                         and r.{is_reconcile}
                   order by run_id desc limit 1) rl on true
)SQL" TIDEMARK_DONE_PARTITIONS R"SQL(
order by a.position
)SQL";
    static const RunRowStatement spelled(text);
    const std::string& statement = spelled(runs_schema());
    const PgResult r = connection_.exec_prepared(statement, {json_parameter(asked)});
    const ResultColumns c(r);
    const int pipeline = c("pipeline"), table_name = c("table_name"), value = c("value"),
              value_type = c("value_type"), moved_at = c("moved_at"), partition_hi = c("partition_hi"),
              partition_moved_at = c("partition_moved_at");
    const int last_run_id = c("last_run_id"), last_status = c("last_status"), last_started_at = c("last_started_at"),
              last_finished_at = c("last_finished_at"), last_rows_written = c("last_rows_written"),
              last_error = c("last_error");
    const int lag = c("horizon_lag_seconds"), held_by = c("horizon_held_by"), waited = c("input_wait_seconds"),
              ahead = c("watermark_ahead"),
              null_rows = c("null_cursor_rows"), infinite_rows = c("infinite_cursor_rows"), success_at = c("success_at");
    const int finished_status = c("finished_status"), finished_error = c("finished_error"),
              finished_error_kind = c("finished_error_kind"), failures = c("failures"),
              failing_since = c("failing_since"), schema_drift = c("schema_drift"), unseen = c("unseen_changes");
    const int rows_deleted = c("rows_deleted"), rows_missing = c("rows_missing"), rows_changed = c("rows_changed"),
              reconciled_at = c("reconciled_at"), reconcile_status = c("reconcile_status"),
              reconcile_error = c("reconcile_error"), reconcile_finished_at = c("reconcile_finished_at");
    const std::string failed(run_row_status_word(RunRowStatus::Failed));
    TableStatesReading out;
    out.now = std::stod(r.text(0, c("now")));
    for (int i = 0; i < r.rows(); ++i) {
      if (r.is_null(i, pipeline)) continue;  // the clock's row when no table was asked
      TableState s;
      s.table = TableKey{r.text(i, pipeline), r.text(i, table_name)};
      apply_watermark(s, r.optional_text(i, value), r.optional_text(i, value_type), optional_double(r, i, moved_at),
                      optional_double(r, i, partition_hi), optional_double(r, i, partition_moved_at));
      if (!r.is_null(i, last_run_id)) {
        LatestRun run;
        run.run_id = r.integer(i, last_run_id);
        run.status = r.text(i, last_status);
        run.started_at = std::stod(r.text(i, last_started_at));
        run.finished_at = optional_double(r, i, last_finished_at);
        run.rows_written = optional_integer(r, i, last_rows_written).value_or(0);
        run.error = r.optional_text(i, last_error);
        s.last_run = run;
      }
      s.horizon_lag_seconds = optional_double(r, i, lag);
      s.horizon_held_by = r.optional_text(i, held_by);
      s.input_wait_seconds = optional_double(r, i, waited);
      s.ahead_of_source = !r.is_null(i, ahead) && r.boolean(i, ahead);
      s.null_cursor_rows = optional_integer(r, i, null_rows);
      s.infinite_cursor_rows = optional_integer(r, i, infinite_rows);
      s.last_success_at = optional_double(r, i, success_at);
      s.last_finished_failed = !r.is_null(i, finished_status) && r.text(i, finished_status) == failed;
      s.last_finished_error = r.optional_text(i, finished_error);
      if (!r.is_null(i, finished_error_kind)) {
        s.last_finished_error_kind = error_kind_named(r.text(i, finished_error_kind));
      }
      s.failures_since_success = optional_integer(r, i, failures).value_or(0);
      s.failing_since = optional_double(r, i, failing_since);
      s.schema_drift = r.optional_text(i, schema_drift);
      if (!r.is_null(i, reconciled_at)) {
        s.last_reconcile = ReconcileState{optional_integer(r, i, rows_deleted).value_or(0),
                                          optional_integer(r, i, rows_missing).value_or(0),
                                          optional_integer(r, i, rows_changed).value_or(0),
                                          std::stod(r.text(i, reconciled_at))};
      }
      s.unseen_changes = optional_integer(r, i, unseen);
      if (!r.is_null(i, reconcile_status) && r.text(i, reconcile_status) == failed) {
        s.last_reconcile_failed = true;
        s.last_reconcile_error = r.optional_text(i, reconcile_error);
        s.last_reconcile_failed_at = optional_double(r, i, reconcile_finished_at);
      }
      out.tables.push_back(std::move(s));
    }
    return out;
  });
}

Result<MovesSnapshot> StateReader::table_moves(const std::vector<TableKey>& tables) {
  return as_result([&] {
    const nlohmann::json asked = table_keys_json(tables);
    // The parts of table_states a load changes, each found as it finds them.
    static const std::string_view text = "with asked as (" TIDEMARK_ASKED_TABLES ")" R"SQL(
select a.pipeline, a.table_name, w.value, w.value_type, extract(epoch from w.moved_at)::float8 as moved_at,
       (select extract(epoch from r.finished_at)::float8 from tidemark.runs r
        where r.pipeline = a.pipeline and r.table_name = a.table_name and r.status = {success} and r.{is_load}
        order by run_id desc limit 1) as success_at,
       extract(epoch from p.partition_hi)::float8 as partition_hi,
       extract(epoch from p.moved_at)::float8 as partition_moved_at, extract(epoch from now())::float8 as now
from (select 1) one left join asked a on true
left join tidemark.watermarks w on w.pipeline = a.pipeline and w.table_name = a.table_name
)SQL" TIDEMARK_DONE_PARTITIONS R"SQL(
order by a.position
)SQL";
    static const RunRowStatement spelled(text);
    const std::string& statement = spelled(runs_schema());
    const PgResult r = connection_.exec_prepared(statement, {json_parameter(asked)});
    const ResultColumns c(r);
    const int pipeline = c("pipeline"), table_name = c("table_name"), value = c("value"),
              value_type = c("value_type"), moved_at = c("moved_at"), success_at = c("success_at"),
              partition_hi = c("partition_hi"), partition_moved_at = c("partition_moved_at");
    MovesSnapshot out;
    out.now = std::stod(r.text(0, c("now")));
    for (int i = 0; i < r.rows(); ++i) {
      if (r.is_null(i, pipeline)) continue;  // the clock's row when no table was asked
      TableState s;
      apply_watermark(s, r.optional_text(i, value), r.optional_text(i, value_type), optional_double(r, i, moved_at),
                      optional_double(r, i, partition_hi), optional_double(r, i, partition_moved_at));
      out.tables.push_back(TableMoves{TableKey{r.text(i, pipeline), r.text(i, table_name)}, s.watermark_unix,
                                      s.moved_at, optional_double(r, i, success_at)});
    }
    return out;
  });
}

Result<std::int64_t> StateReader::schema_bytes() {
  return as_result([&] {
    return connection_.exec(
                          "select coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint from pg_class c "
                          "where c.relnamespace = 'tidemark'::regnamespace and c.relkind in ('r', 'm', 'p')")
        .integer(0, 0);
  });
}

Result<std::optional<std::string>> StateReader::stored_watermark(const TableKey& table) {
  return as_result([&] {
    const PgResult r = connection_.exec(
        "select value from tidemark.watermarks where pipeline = $1 and table_name = $2", {table.pipeline, table.table});
    if (r.rows() == 0) return std::optional<std::string>();
    return r.optional_text(0, 0);
  });
}

Result<std::vector<RunRecord>> StateReader::recent_runs(const RunFilter& filter, std::int64_t limit) {
  return as_result([&] {
    const PgResult r = connection_.exec(
        "select run_id, pipeline, table_name, trigger, status,"
        " to_char(started_at at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') as started_at,"
        " extract(epoch from finished_at - started_at)::numeric(12,3)::text as duration,"
        " window_lo, window_hi, watermark_before, watermark_after, rows_read, rows_written, error, host, pid,"
        " to_jsonb(runs) ->> 'error_kind' as error_kind,"  // as in table_states: version 2 has no such column
        " (to_jsonb(runs) ->> 'rows_deleted')::bigint as rows_deleted,"
        " (to_jsonb(runs) ->> 'rows_missing')::bigint as rows_missing,"
        " (to_jsonb(runs) ->> 'rows_changed')::bigint as rows_changed,"
        " (to_jsonb(runs) ->> 'unseen_changes')::bigint as unseen_changes,"
        " to_jsonb(runs) ->> 'rewrite_reason' as rewrite_reason, horizon_held_by"
        " from tidemark.runs where ($1::text is null or pipeline = $1)"
        " and ($3::text is null or table_name like $3 escape '\\') and ($4::text is null or status = $4)"
        " order by run_id desc limit $2",
        {filter.pipeline, std::to_string(limit),
         filter.table_glob ? std::optional<std::string>(glob_to_like(*filter.table_glob)) : std::nullopt,
         filter.status});
    const ResultColumns c(r);
    const int run_id = c("run_id"), pipeline_name = c("pipeline"), table_name = c("table_name"),
              trigger = c("trigger"), status = c("status"), started_at = c("started_at"), duration = c("duration"),
              rows_read = c("rows_read"), rows_written = c("rows_written");
    // The fields that may be null, each with the column it is read from.
    using Text = std::optional<std::string> RunRecord::*;
    using Count = std::optional<std::int64_t> RunRecord::*;
    std::vector<std::pair<int, Text>> texts;
    for (const auto& [name, field] : {std::pair<const char*, Text>{"window_lo", &RunRecord::window_lo},
                                      {"window_hi", &RunRecord::window_hi},
                                      {"watermark_before", &RunRecord::watermark_before},
                                      {"watermark_after", &RunRecord::watermark_after},
                                      {"error", &RunRecord::error},
                                      {"error_kind", &RunRecord::error_kind},
                                      {"host", &RunRecord::host},
                                      {"rewrite_reason", &RunRecord::rewrite_reason},
                                      {"horizon_held_by", &RunRecord::held_by}}) {
      texts.emplace_back(c(name), field);
    }
    std::vector<std::pair<int, Count>> counts;
    for (const auto& [name, field] : {std::pair<const char*, Count>{"pid", &RunRecord::pid},
                                      {"rows_deleted", &RunRecord::rows_deleted},
                                      {"rows_missing", &RunRecord::rows_missing},
                                      {"rows_changed", &RunRecord::rows_changed},
                                      {"unseen_changes", &RunRecord::unseen_changes}}) {
      counts.emplace_back(c(name), field);
    }
    std::vector<RunRecord> out;
    for (int i = 0; i < r.rows(); ++i) {
      RunRecord run;
      run.run_id = r.integer(i, run_id);
      run.pipeline = r.text(i, pipeline_name);
      run.table = r.text(i, table_name);
      run.trigger = r.text(i, trigger);
      run.status = r.text(i, status);
      run.started_at = r.text(i, started_at);
      run.duration_seconds = optional_double(r, i, duration);
      run.rows_read = r.integer(i, rows_read);
      run.rows_written = r.integer(i, rows_written);
      for (const auto& [column, field] : texts) run.*field = r.optional_text(i, column);
      for (const auto& [column, field] : counts) run.*field = optional_integer(r, i, column);
      out.push_back(std::move(run));
    }
    return out;
  });
}

std::vector<TableKey> configured_tables(const Config& config) {
  std::vector<TableKey> out;
  for (const PipelineConfig& p : config.pipelines) {
    for (const TableConfig& t : p.tables) out.push_back({p.name, t.name});
  }
  return out;
}

Result<LastStarts> StateReader::last_run_starts(const std::vector<TableKey>& tables) {
  return as_result([&] {
    const nlohmann::json asked = table_keys_json(tables);
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
    static const std::string_view text = R"SQL(
with asked as (
  select item ->> 0 as pipeline, item ->> 1 as table_name from json_array_elements($1::json) item)
select a.pipeline, a.table_name, {load} as kind,
       coalesce(extract(epoch from l.scheduled_for), floor(extract(epoch from l.started_at)))::bigint as started_at
from asked a
cross join lateral (select started_at, scheduled_for from tidemark.runs r
                    where r.pipeline = a.pipeline and r.table_name = a.table_name and r.{is_load}
                          and r.trigger <> $2
                    order by run_id desc limit 1) l
union all
select a.pipeline, a.table_name, {reconcile}, extract(epoch from c.started_at)::bigint
from asked a
cross join lateral (select coalesce(
                      (select coalesce(scheduled_for, date_trunc('second', started_at)) from tidemark.runs r
                       where r.pipeline = a.pipeline and r.table_name = a.table_name and r.{is_reconcile}
                             and r.status = {success}
                       order by run_id desc limit 1),
                      (select coalesce(scheduled_for, date_trunc('second', started_at)) from tidemark.runs r
                       where r.pipeline = a.pipeline and r.table_name = a.table_name and r.{is_reconcile}
                       order by run_id desc limit 1)) as started_at) c
where c.started_at is not null
)SQL";
    static const RunRowStatement spelled(text);
    const std::string& statement = spelled(runs_schema());
    const PgResult r =
        connection_.exec(statement, {json_parameter(asked), std::string(run_trigger_name(RunTrigger::Backfill))});
    const ResultColumns c(r);
    const int pipeline = c("pipeline"), table_name = c("table_name"), kind = c("kind"), started_at = c("started_at");
    LastStarts out;
    for (int i = 0; i < r.rows(); ++i) {
      const std::optional<JobKind> job_kind = job_kind_named(r.text(i, kind));
      if (!job_kind) std::abort();  // the kind is one of the statement's own words
      const JobKey job{TableKey{r.text(i, pipeline), r.text(i, table_name)}, *job_kind};
      out[job] = Instant(std::chrono::seconds(r.integer(i, started_at)));
    }
    // A resume without --catch-up counts as a start: a restart or a
    // takeover after it does not make up the firings missed while paused.
    // A job that never ran stays absent (it waits for its first firing).
    auto resumed = PauseBook(connection_).resumed_at(tables);
    if (!resumed) throw PgError(resumed.error_kind(), resumed.error());
    for (auto& [job, start] : out) {
      const auto it = resumed->find(job.table);
      if (it != resumed->end()) start = std::max(start, Instant(std::chrono::seconds(it->second)));
    }
    return out;
  });
}

RunsSchema StateReader::runs_schema() {
  if (!runs_schema_) runs_schema_ = runs_schema_at(state_schema_version(connection_));
  return *runs_schema_;
}

}  // namespace tidemark
