#include "daemon/pg/state/pg_state_store.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "daemon/pg/libpq/json_parameter.h"
#include "daemon/pg/libpq/result_columns.h"
#include "daemon/pg/state/run_lock_halves.h"
#include "daemon/pg/state/runs_table.h"
#include "daemon/pg/state/state_reader.h"
#include "daemon/pg/state/table_keys_json.h"

namespace tidemark {
namespace {

std::int64_t unix_seconds(Instant t) { return t.time_since_epoch().count(); }

// Instants cross the wire as Unix seconds: exact and zone-free.
std::string epoch_text(Instant t) { return std::to_string(unix_seconds(t)); }

std::optional<std::string> optional_cursor_text(const std::optional<CursorValue>& value) {
  if (!value) return std::nullopt;
  return cursor_to_text(*value);
}

// One bound of an optional window, as text; nothing without a window.
std::optional<std::string> window_text(const std::optional<Window>& window, CursorValue Window::*bound) {
  if (!window) return std::nullopt;
  return cursor_to_text((*window).*bound);
}

// The loaded columns as stored: [{"name": ..., "type": ...}, ...] in order.
std::optional<std::string> columns_json(const std::optional<std::vector<ColumnShape>>& columns) {
  if (!columns) return std::nullopt;
  nlohmann::json out = nlohmann::json::array();
  for (const ColumnShape& c : *columns) out.push_back({{"name", c.name}, {"type", c.type}});
  return json_parameter(out);
}

// A stored snapshot; nothing when the text is not one (it is then
// rewritten by the next successful load, as if none had been stored).
std::optional<std::vector<ColumnShape>> columns_from_json(const std::string& text) {
  try {
    const nlohmann::json stored = nlohmann::json::parse(text);
    std::vector<ColumnShape> out;
    for (const auto& c : stored) out.push_back({c.at("name").get<std::string>(), c.at("type").get<std::string>()});
    return out;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}


// What open_run and read_tables read of `table`, from row `row` of `r`:
// its watermark's value and value_type, its loaded columns and its
// snapshot horizon (source_xmin, target_xmin).
OpenedRun opened_table(const PgResult& r, const ResultColumns& c, int row, const TableKey& table) {
  OpenedRun out;
  const int value = c("value"), value_type = c("value_type"), columns = c("columns"), source_xmin = c("source_xmin");
  if (!r.is_null(row, value)) {
    const auto stored = cursor_from_stored(r.text(row, value_type), r.text(row, value));
    if (stored) {
      out.watermark = StoredWatermark{*stored, r.text(row, value_type) == kSnapshotValueType};
    } else {
      out.unreadable_watermark = "stored watermark of " + table.display() + ": " + stored.error();
    }
  }
  if (!r.is_null(row, columns)) out.loaded_columns = columns_from_json(r.text(row, columns));
  if (!r.is_null(row, source_xmin)) {
    out.snapshot_horizon = SnapshotHorizon{r.integer(row, source_xmin), r.integer(row, c("target_xmin"))};
  }
  return out;
}

// Many values as one parameter: a json array, which no value can break out of.
template <typename T>
std::string json_array(const std::vector<T>& values) {
  return json_parameter(nlohmann::json(values));
}

std::vector<std::string> lock_keys(const std::vector<RunLock>& locks) {
  std::vector<std::string> keys;
  for (const RunLock& l : locks) keys.push_back(std::to_string(run_lock_key(l)));
  return keys;
}

}  // namespace

PgStateStore::PgStateStore(PgConnection& connection) : connection_(connection) {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) == 0) host_ = name;
}

Result<bool> PgStateStore::lock(const RunLock& lock, bool wait) {
  const std::string key = std::to_string(run_lock_key(lock));
  return as_result([&] {
    if (!wait) {
      const PgResult r = connection_.exec_prepared("select pg_try_advisory_lock($1::bigint), pg_backend_pid()", {key});
      if (r.boolean(0, 0)) holder_pid_[run_lock_key(lock)] = static_cast<int>(r.integer(0, 1));
      return r.boolean(0, 0);
    }
    // Waits for a scheduled run or a backfill holding the same lock, but
    // not for ever.
    connection_.exec("select set_config('lock_timeout', '300s', false)");
    try {
      holder_pid_[run_lock_key(lock)] =
          static_cast<int>(connection_.exec("select pg_backend_pid() from pg_advisory_lock($1::bigint)", {key})
                               .integer(0, 0));
    } catch (const PgError& e) {
      connection_.exec("select set_config('lock_timeout', '0', false)");
      if (e.sqlstate() == "55P03") return false;  // lock_not_available
      throw;
    }
    connection_.exec("select set_config('lock_timeout', '0', false)");
    // Not the role's lock_timeout any more: the next user starts afresh.
    connection_.mark_session_changed();
    return true;
  });
}

void PgStateStore::help(const RunLock& lock, int holder_pid) {
  helper_ = true;
  holder_pid_[run_lock_key(lock)] = holder_pid;
}

int PgStateStore::holder_of(const RunLock& lock) const {
  const auto held = holder_pid_.find(run_lock_key(lock));
  return held != holder_pid_.end() ? held->second : 0;
}

void PgStateStore::unlock(const RunLock& lock) {
  const std::int64_t key = run_lock_key(lock);
  holder_pid_.erase(key);
  try {
    connection_.rollback_quietly();
    // A lock that was not released must not stay on a session a pool
    // keeps: nobody else could take it until that session closed.
    if (!connection_.exec_prepared("select pg_advisory_unlock($1::bigint)", {std::to_string(key)}).boolean(0, 0)) {
      connection_.poison();
    }
  } catch (const PgError&) {
    connection_.poison();  // the session is gone, and its lock with it; never reuse it
  }
}

Result<std::optional<std::string>> PgStateStore::stored_watermark(const TableKey& table) {
  return StateReader(connection_).stored_watermark(table);
}

Result<std::optional<StoredWatermark>> PgStateStore::read_watermark(const TableKey& table) {
  return as_result([&]() -> Result<std::optional<StoredWatermark>> {
    const PgResult r = connection_.exec_prepared(
        "select value, value_type from tidemark.watermarks where pipeline = $1 and table_name = $2",
        {table.pipeline, table.table});
    if (r.rows() == 0) return std::optional<StoredWatermark>();
    const auto value = cursor_from_stored(r.text(0, 1), r.text(0, 0));
    if (!value) return permanent_error("stored watermark of " + table.display() + ": " + value.error());
    return std::optional<StoredWatermark>(StoredWatermark{*value, r.text(0, 1) == kSnapshotValueType});
  });
}

Result<OpenedRun> PgStateStore::open_run(const RunStart& start) {
  return as_result([&] {
    // One round trip. The statement's snapshot does not see the row it
    // inserts, so the new run is never counted as abandoned. A partition's
    // lock proves dead only the runs of its own window, and a partition
    // has no watermark (one left from an incremental past is not its).
    const TableKey& table = start.table;
    static const std::string statement = run_row_sql(R"SQL(
with abandoned as (
  update tidemark.runs set status = {failed}, finished_at = now(), error_kind = {transient},
         error = 'abandoned: found running by a later run that holds the lock'
  where pipeline = $1 and table_name = $2 and status = {running} and ($6::text is null or window_lo = $6)
  returning 1),
stored as (
  select value, value_type from tidemark.watermarks where pipeline = $1 and table_name = $2 and $6::text is null),
started as (
  insert into tidemark.runs (pipeline, table_name, trigger, kind, watermark_before, status, host, pid, window_lo,
                             window_hi, scheduled_for)
  select s.pipeline, s.table_name, s.trigger, s.kind, (select value from stored), {running}, $4, $5, $6, $7,
         to_timestamp($8::bigint)
  from jsonb_to_record($3::jsonb) as s({start_columns})
  returning run_id)
select (select run_id from started) as run_id, (select count(*) from abandoned) as abandoned, value, value_type,
       (select columns::text from tidemark.loaded_columns where pipeline = $1 and table_name = $2) as columns,
       h.source_xmin, h.target_xmin
from (select 1) one left join stored on true
  left join tidemark.snapshot_horizons h on h.pipeline = $1 and h.table_name = $2 and $6::text is null
)SQL");
    const PgResult r = connection_.exec_prepared(
        statement, {table.pipeline, table.table, json_parameter(run_start_columns(start)), host_, std::to_string(::getpid()),
                    window_text(start.window, &Window::lo), window_text(start.window, &Window::hi),
                    firing_ ? std::optional<std::string>(std::to_string(firing_->time_since_epoch().count()))
                            : std::nullopt});
    const ResultColumns c(r);
    OpenedRun out = opened_table(r, c, 0, table);
    out.run = r.integer(0, c("run_id"));
    out.abandoned = static_cast<int>(r.integer(0, c("abandoned")));
    return out;
  });
}

Result<StepRecorded> PgStateStore::record_step(PgConnection& tx, const StepRecord& step,
                                              std::optional<std::int64_t> input_changes_counted) {
  // One statement, one round trip: the lock check, the compare-and-set of
  // the watermark, the partition marked done and the run row, every write
  // conditional on the lock and on the compare-and-set, so that even on
  // its own (no transaction open) the statement writes all or nothing.
  // A session's advisory lock goes only with an unlock or with the session
  // (whose end this connection would not survive): it is held when the
  // statement runs on the server process that took it. Through a pooler
  // that hands transactions to any server, another process is not it.
  // A helper's record runs on a session of its own: the lock counts as
  // held while the run's server process holds it and the run's row is
  // still running. The row matters where a pooler hands that process to
  // another client (its locks reset) which may then take the lock: the
  // next holder marks the row failed (open_run) before it waits for
  // helpers, so a helper's record either commits before that wait ends
  // (Target::await_range_helpers) or finds the row failed.
  if (helper_ && (step.move || step.ranges_finished || step.partition_done)) std::abort();  // a helper only marks ranges
  const int holder = holder_of(step.lock);  // 0: no process
  const RunLockHalves halves(run_lock_key(step.lock));
  const char* mode = !step.move ? "none" : step.move->expected ? "update" : "insert";
  // Its values by name, as the statement reads them.
  nlohmann::json fields = {
      {"pipeline", step.lock.table.pipeline},
      {"table_name", step.lock.table.table},
      {"run_id", step.run},
      {"holder", holder},
      {"helper", helper_},
      {"lock_high", halves.high},
      {"lock_low", halves.low},
      {"mode", mode},
      {"expected", column_value(step.move ? optional_cursor_text(step.move->expected) : std::nullopt)},
      {"next", column_value(step.move ? optional_cursor_text(step.move->next) : std::nullopt)},
      {"value_type", step.move ? nlohmann::json(std::string(step.move->snapshot ? kSnapshotValueType
                                                                                : cursor_type_name(step.move->next.type)))
                               : nlohmann::json()},
      {"window_lo", column_value(window_text(step.window, &Window::lo))},
      {"window_hi", column_value(window_text(step.window, &Window::hi))},
      {"rows_read", step.counts.rows_read},
      {"rows_written", step.counts.rows_written},
      {"rows_deleted", step.reconcile ? nlohmann::json(step.reconcile->deleted) : nlohmann::json()},
      {"rows_missing", step.reconcile ? nlohmann::json(step.reconcile->missing) : nlohmann::json()},
      {"rows_changed", step.reconcile ? nlohmann::json(step.reconcile->changed) : nlohmann::json()},
      {"columns", column_value(columns_json(step.loaded_columns))},
      {"source_xmin", step.snapshot_horizon ? nlohmann::json(step.snapshot_horizon->source) : nlohmann::json()},
      {"target_xmin", step.snapshot_horizon ? nlohmann::json(step.snapshot_horizon->target) : nlohmann::json()},
      {"range_done", step.range_done ? nlohmann::json(*step.range_done) : nlohmann::json()},
      {"ranges_finished", step.ranges_finished},
  };
  if (step.partition_done && step.lock.partition) {
    fields["done_lo"] = unix_seconds(step.lock.partition->lo);
    fields["done_hi"] = unix_seconds(step.lock.partition->hi);
  }
  // A change of the table's inputs counted since the write read them
  // flags the partition it marks done (count_input_changes holds the
  // count's lock until the commit: a change counted after waits, then
  // finds the partition done, to flag).
  if (step.partition_done && step.input_changes_seen && input_changes_counted &&
      *input_changes_counted != *step.input_changes_seen) {
    fields["done_recheck"] = "an input changed while it was written";
  }
  return as_result([&] {
    static const std::string statement = run_row_sql(R"SQL(
with s as (
  select * from jsonb_to_record($1::jsonb) as s(pipeline text, table_name text, run_id bigint, holder int,
       helper boolean, lock_high bigint, lock_low bigint, mode text,
       expected text, next text, value_type text, window_lo text, window_hi text, rows_read bigint,
       rows_written bigint, rows_deleted bigint, rows_missing bigint, rows_changed bigint, done_lo bigint,
       done_hi bigint, columns text, source_xmin bigint, target_xmin bigint, done_recheck text, range_done integer,
       ranges_finished boolean)),
lock as (
  select case when not s.helper then pg_backend_pid() = s.holder
              else exists (select 1 from pg_locks l
                           where l.locktype = 'advisory' and l.pid = s.holder and l.granted and l.objsubid = 1
                                 and l.mode = 'ExclusiveLock' and l.classid::bigint = s.lock_high
                                 and l.objid::bigint = s.lock_low
                                 and l.database = (select oid from pg_database where datname = current_database()))
                   and exists (select 1 from tidemark.runs r where r.run_id = s.run_id and r.status = {running})
         end as held
  from s),
moved as (
  update tidemark.watermarks w set value = s.next, value_type = s.value_type, updated_at = now(),
         last_run_id = s.run_id, moved_at = case when w.value is distinct from s.next then now() else w.moved_at end
  from s
  where s.mode = 'update' and (select held from lock) and w.pipeline = s.pipeline and w.table_name = s.table_name
        and w.value = s.expected and w.value_type = s.value_type
  returning 1),
created as (
  insert into tidemark.watermarks (pipeline, table_name, value, value_type, moved_at, updated_at, last_run_id)
  select s.pipeline, s.table_name, s.next, s.value_type, now(), now(), s.run_id from s
  where s.mode = 'insert' and (select held from lock)
  on conflict do nothing
  returning 1),
written as (
  select (select held from lock)
         and ((select mode from s) = 'none' or exists (select 1 from moved) or exists (select 1 from created)) as ok),
done as (
  insert into tidemark.partitions (pipeline, table_name, partition_lo, partition_hi, status, run_id, updated_at,
                                   recheck, recheck_since)
  select s.pipeline, s.table_name, to_timestamp(s.done_lo), to_timestamp(s.done_hi), 'done', s.run_id, now(),
         s.done_recheck, case when s.done_recheck is null then null else clock_timestamp() end from s
  where s.done_lo is not null and (select ok from written)
  on conflict (pipeline, table_name, partition_lo) do update
  set partition_hi = excluded.partition_hi, status = 'done', run_id = excluded.run_id, updated_at = now(),
      recheck = (select done_recheck from s),
      recheck_since = case when (select done_recheck from s) is null then null else clock_timestamp() end),
run as (
  update tidemark.runs r set window_lo = coalesce(r.window_lo, s.window_lo), window_hi = coalesce(s.window_hi, r.window_hi),
         watermark_after = coalesce(s.next, r.watermark_after), rows_read = r.rows_read + s.rows_read,
         rows_written = r.rows_written + s.rows_written,
         rows_deleted = case when s.rows_deleted is null then r.rows_deleted
                             else coalesce(r.rows_deleted, 0) + s.rows_deleted end,
         rows_missing = case when s.rows_missing is null then r.rows_missing
                             else coalesce(r.rows_missing, 0) + s.rows_missing end,
         rows_changed = case when s.rows_changed is null then r.rows_changed
                             else coalesce(r.rows_changed, 0) + s.rows_changed end
  from s
  where r.run_id = s.run_id and (select ok from written)),
shape as (
  insert into tidemark.loaded_columns (pipeline, table_name, columns, changed_at, run_id)
  select s.pipeline, s.table_name, s.columns::jsonb, now(), s.run_id from s
  where s.columns is not null and (select ok from written)
  on conflict (pipeline, table_name) do update
  set columns = excluded.columns, changed_at = now(), run_id = excluded.run_id),
horizon as (
  insert into tidemark.snapshot_horizons (pipeline, table_name, source_xmin, target_xmin, run_id)
  select s.pipeline, s.table_name, s.source_xmin, s.target_xmin, s.run_id from s
  where s.source_xmin is not null and (select ok from written)
  on conflict (pipeline, table_name) do update
  set source_xmin = excluded.source_xmin, target_xmin = excluded.target_xmin, run_id = excluded.run_id),
range_marked as (
  update tidemark.load_ranges l set done_by = s.run_id, done_at = now()
  from s
  where s.range_done is not null and not s.ranges_finished and (select ok from written)
        and l.pipeline = s.pipeline and l.table_name = s.table_name and l.range_no = s.range_done),
ranges_forgotten as (
  delete from tidemark.load_ranges l
  using s
  where s.ranges_finished and (select ok from written) and l.pipeline = s.pipeline and l.table_name = s.table_name)
select (select held from lock) as held, (select ok from written) as written
)SQL");
    const PgResult r = tx.exec_prepared(statement, {json_parameter(fields)});
    const ResultColumns c(r);
    StepRecorded out;
    out.lock_held = r.boolean(0, c("held"));
    out.written = r.boolean(0, c("written"));
    if (out.lock_held && !out.written && step.move) {
      // What the other writer left, for the message: read again, since the
      // statement's snapshot predates the write that beat it.
      const PgResult stored = tx.exec(
          "select value, value_type from tidemark.watermarks where pipeline = $1 and table_name = $2",
          {step.lock.table.pipeline, step.lock.table.table});
      if (stored.rows() == 1) {
        const auto found = cursor_from_stored(stored.text(0, 1), stored.text(0, 0));
        if (found) out.found = *found;
      }
    }
    return out;
  });
}

Result<std::vector<bool>> PgStateStore::try_lock_all(const std::vector<RunLock>& locks) {
  auto taken = as_result([&] {
    std::vector<bool> out;
    const PgResult r = connection_.exec_prepared(
        "select pg_try_advisory_lock(k.key::bigint), pg_backend_pid()"
        " from jsonb_array_elements_text($1::jsonb) with ordinality k(key, n) order by k.n",
        {json_array(lock_keys(locks))});
    if (r.rows() != static_cast<int>(locks.size())) std::abort();  // one row per lock asked
    for (std::size_t i = 0; i < locks.size(); ++i) {
      const int row = static_cast<int>(i);
      const bool held = r.boolean(row, 0);
      if (held) holder_pid_[run_lock_key(locks[i])] = static_cast<int>(r.integer(row, 1));
      out.push_back(held);
    }
    return out;
  });
  // Locks a failed statement took would outlive it on the session.
  if (!taken) connection_.poison();
  return taken;
}

void PgStateStore::unlock_all(const std::vector<RunLock>& locks) {
  for (const RunLock& l : locks) holder_pid_.erase(run_lock_key(l));
  try {
    connection_.rollback_quietly();
    const PgResult r = connection_.exec_prepared(
        "select coalesce(bool_and(pg_advisory_unlock(k.key::bigint)), true)"
        " from jsonb_array_elements_text($1::jsonb) k(key)",
        {json_array(lock_keys(locks))});
    // As unlock(): a lock that was not released must not stay on a pooled session.
    if (!r.boolean(0, 0)) connection_.poison();
  } catch (const PgError&) {
    connection_.poison();
  }
}

Result<TablesRead> PgStateStore::read_tables(const std::vector<TableKey>& tables) {
  nlohmann::json asked = nlohmann::json::array();
  for (std::size_t i = 0; i < tables.size(); ++i) {
    asked.push_back({{"n", i}, {"pipeline", tables[i].pipeline}, {"table_name", tables[i].table}});
  }
  return as_result([&] {
    // The columns opened_table() reads, as open_run's.
    const PgResult r = connection_.exec_prepared(R"SQL(
select w.value, w.value_type, l.columns::text as columns, h.source_xmin, h.target_xmin,
       (extract(epoch from now()) * 1000000)::bigint as now
from jsonb_to_recordset($1::jsonb) as t(n int, pipeline text, table_name text)
  left join tidemark.watermarks w on w.pipeline = t.pipeline and w.table_name = t.table_name
  left join tidemark.loaded_columns l on l.pipeline = t.pipeline and l.table_name = t.table_name
  left join tidemark.snapshot_horizons h on h.pipeline = t.pipeline and h.table_name = t.table_name
order by t.n
)SQL",
                                                 {json_parameter(asked)});
    if (r.rows() != static_cast<int>(tables.size())) std::abort();  // one row per table asked
    const ResultColumns c(r);
    TablesRead out;
    for (int row = 0; row < r.rows(); ++row) {
      out.tables.push_back(opened_table(r, c, row, tables[static_cast<std::size_t>(row)]));
      out.at = r.integer(row, c("now"));
    }
    return out;
  });
}

Result<std::vector<QuietRunRecorded>> PgStateStore::record_quiet_runs(const std::vector<QuietRun>& runs) {
  nlohmann::json asked = nlohmann::json::array();
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const QuietRun& q = runs[i];
    nlohmann::json row = run_start_columns(q.start);
    row.update(run_end_columns(q.end));
    row.update({
        {"n", i},
        {"scheduled", q.scheduled ? nlohmann::json(q.scheduled->time_since_epoch().count()) : nlohmann::json()},
        {"started", q.started},
        {"holder", holder_of(RunLock{q.start.table, std::nullopt})},
        {"expected", column_value(q.move ? optional_cursor_text(q.move->expected) : std::nullopt)},
        {"next", column_value(q.move ? optional_cursor_text(q.move->next) : std::nullopt)},
        {"value_type", q.move ? nlohmann::json(std::string(cursor_type_name(q.move->next.type))) : nlohmann::json()},
    });
    if (q.move && q.move->snapshot) std::abort();  // a batch runs incremental tables only
    asked.push_back(row);
  }
  return as_result([&] {
    // One statement, all or nothing; each run written only while its lock
    // is held by this session's process and its watermark is where the
    // batch found it, as record_step writes a step. The watermark it
    // started from is the one it expected: a batch runs tables with one.
    static const std::string statement = run_row_sql(R"SQL(
with asked as (
  select a.*, nextval(pg_get_serial_sequence('tidemark.runs', 'run_id')) as run_id, pg_backend_pid() = a.holder as held
  from jsonb_to_recordset($1::jsonb) as a(n int, {start_columns}, {end_columns}, scheduled bigint, started bigint,
       holder int, expected text, next text, value_type text)),
moved as (
  update tidemark.watermarks w set value = a.next, value_type = a.value_type, updated_at = now(),
         last_run_id = a.run_id, moved_at = case when w.value is distinct from a.next then now() else w.moved_at end
  from asked a
  where a.held and a.next is not null and w.pipeline = a.pipeline and w.table_name = a.table_name
        and w.value = a.expected and w.value_type = a.value_type
  returning a.n),
judged as (
  select a.*, a.held and (a.next is null or a.n in (select n from moved)) as ok from asked a),
abandoned as (
  update tidemark.runs r set status = {failed}, finished_at = now(), error_kind = {transient},
         error = 'abandoned: found running by a later run that holds the lock'
  from judged j
  where j.ok and r.pipeline = j.pipeline and r.table_name = j.table_name and r.status = {running}
  returning 1),
written as (
  insert into tidemark.runs (run_id, pipeline, table_name, trigger, kind, watermark_before, host, pid,
                             scheduled_for, started_at, finished_at, {end_names})
  select e.run_id, e.pipeline, e.table_name, e.trigger, e.kind,
         (select w.value from tidemark.watermarks w where w.pipeline = e.pipeline and w.table_name = e.table_name),
         $2, $3, to_timestamp(e.scheduled), 'epoch'::timestamptz + e.started * interval '1 microsecond',
         now(), {end_values}
  from judged e where e.ok
  returning 1)
select n, ok, run_id from judged order by n
)SQL");
    const PgResult r = connection_.exec_prepared(statement, {json_parameter(asked), host_, std::to_string(::getpid())});
    if (r.rows() != static_cast<int>(runs.size())) std::abort();  // one row per run asked
    const ResultColumns c(r);
    const int ok = c("ok"), run_id = c("run_id");
    std::vector<QuietRunRecorded> out;
    for (int row = 0; row < r.rows(); ++row) {
      QuietRunRecorded recorded;
      recorded.written = r.boolean(row, ok);
      if (recorded.written) recorded.run = r.integer(row, run_id);
      out.push_back(recorded);
    }
    return out;
  });
}

Status PgStateStore::finish_run(RunId run, const RunEnd& end) {
  return as_result([&] {
    connection_.rollback_quietly();
    static const std::string statement = run_row_sql(R"SQL(
update tidemark.runs r set {end_assignments}, finished_at = now()
from jsonb_to_record($2::jsonb) as e({end_columns})
where r.run_id = $1
)SQL");
    connection_.exec_prepared(statement, {std::to_string(run), json_parameter(run_end_columns(end))});
    return ok_status();
  });
}

Result<std::optional<ChangeCount>> PgStateStore::last_change_count(const TableKey& table) {
  return as_result([&] {
    // What was unseen is seen once a reconcile succeeded after it: that
    // reconcile copied the changed rows again and deleted the gone ones.
    static const std::string statement = run_row_sql(
        "select l.source_changes, case when exists (select 1 from tidemark.runs c where c.pipeline = $1"
        " and c.table_name = $2 and c.kind = {reconcile} and c.status = {success} and c.run_id > l.run_id)"
        " then 0 else coalesce(l.unseen_changes, 0) end as unseen_changes"
        " from (select run_id, source_changes, unseen_changes from tidemark.runs where pipeline = $1"
        " and table_name = $2 and source_changes is not null order by run_id desc limit 1) l");
    const PgResult r = connection_.exec_prepared(statement, {table.pipeline, table.table});
    if (r.rows() == 0) return std::optional<ChangeCount>();
    const ResultColumns c(r);
    return std::optional<ChangeCount>(
        ChangeCount{r.integer(0, c("source_changes")), r.integer(0, c("unseen_changes"))});
  });
}

Result<std::vector<CursorSample>> PgStateStore::read_cursor_samples(const TableKey& table, const std::string& source) {
  return as_result([&] {
    const PgResult r = connection_.exec_prepared(
        "select taken_at, max_value from tidemark.cursor_samples"
        " where pipeline = $1 and table_name = $2 and source = $3 order by taken_at",
        {table.pipeline, table.table, source});
    std::vector<CursorSample> out;
    for (int i = 0; i < r.rows(); ++i) out.push_back(CursorSample{r.integer(i, 0), r.integer(i, 1)});
    return out;
  });
}

Status PgStateStore::save_cursor_samples(const TableKey& table, const std::string& source,
                                         std::optional<SourceMicros> forget_before,
                                         const std::optional<CursorSample>& add) {
  return as_result([&] {
    connection_.exec(
        "with forgotten as (delete from tidemark.cursor_samples where pipeline = $1 and table_name = $2"
        " and (source <> $3 or taken_at < $4::bigint))"
        " insert into tidemark.cursor_samples (pipeline, table_name, source, taken_at, max_value)"
        " select $1, $2, $3, $5::bigint, $6::bigint where $5::bigint is not null"
        " on conflict (pipeline, table_name, taken_at) do update set source = excluded.source,"
        " max_value = excluded.max_value",
        {table.pipeline, table.table, source,
         forget_before ? std::optional<std::string>(std::to_string(*forget_before)) : std::nullopt,
         add ? std::optional<std::string>(std::to_string(add->taken_at)) : std::nullopt,
         add ? std::optional<std::string>(std::to_string(add->max)) : std::nullopt});
    return ok_status();
  });
}

Result<std::optional<Instant>> PgStateStore::last_done_partition(const TableKey& table) {
  return as_result([&] {
    const PgResult r = connection_.exec(
        "select extract(epoch from max(partition_hi))::bigint from tidemark.partitions"
        " where pipeline = $1 and table_name = $2 and status = 'done'",
        {table.pipeline, table.table});
    if (r.is_null(0, 0)) return std::optional<Instant>();
    return std::optional<Instant>(Instant(std::chrono::seconds(r.integer(0, 0))));
  });
}

Result<std::vector<Instant>> PgStateStore::done_partitions(const TableKey& table, Instant from, Instant to) {
  return as_result([&] {
    const PgResult r = connection_.exec(
        "select extract(epoch from partition_lo)::bigint from tidemark.partitions"
        " where pipeline = $1 and table_name = $2 and status = 'done'"
        " and partition_lo >= to_timestamp($3) and partition_lo < to_timestamp($4)",
        {table.pipeline, table.table, epoch_text(from), epoch_text(to)});
    std::vector<Instant> out;
    for (int i = 0; i < r.rows(); ++i) out.emplace_back(std::chrono::seconds(r.integer(i, 0)));
    return out;
  });
}

Status PgStateStore::mark_partition_failed(const TableKey& table, const TimeWindow& partition, RunId run) {
  return as_result([&] {
    connection_.rollback_quietly();
    connection_.exec(
        "insert into tidemark.partitions (pipeline, table_name, partition_lo, partition_hi, status, run_id)"
        " values ($1, $2, to_timestamp($3), to_timestamp($4), 'failed', $5)"
        " on conflict (pipeline, table_name, partition_lo) do update set status = 'failed', run_id = excluded.run_id,"
        " updated_at = now() where tidemark.partitions.status <> 'done'",
        {table.pipeline, table.table, epoch_text(partition.lo), epoch_text(partition.hi), std::to_string(run)});
    return ok_status();
  });
}

Result<std::vector<FlaggedPartition>> PgStateStore::flagged_partitions(const TableKey& table) {
  return as_result([&] {
    const PgResult r = connection_.exec_prepared(
        "select extract(epoch from partition_lo)::bigint as lo, extract(epoch from partition_hi)::bigint as hi,"
        " recheck, (extract(epoch from recheck_since) * 1000000)::bigint as since from tidemark.partitions"
        " where pipeline = $1 and table_name = $2 and recheck is not null and status = 'done' order by partition_lo",
        {table.pipeline, table.table});
    const ResultColumns c(r);
    std::vector<FlaggedPartition> out;
    for (int i = 0; i < r.rows(); ++i) {
      out.push_back({TimeWindow{Instant(std::chrono::seconds(r.integer(i, c("lo")))),
                                Instant(std::chrono::seconds(r.integer(i, c("hi"))))},
                     r.text(i, c("recheck")), r.is_null(i, c("since")) ? 0 : r.integer(i, c("since"))});
    }
    return out;
  });
}

Status PgStateStore::clear_flag(const TableKey& table, const FlaggedPartition& flag) {
  return as_result([&] {
    // Not a flag set again since it was read: that one is a change the
    // check did not see.
    connection_.exec_prepared(
        "update tidemark.partitions set recheck = null, recheck_since = null where pipeline = $1"
        " and table_name = $2 and partition_lo = to_timestamp($3::bigint) and recheck is not null"
        " and coalesce((extract(epoch from recheck_since) * 1000000)::bigint, 0) = $4::bigint",
        {table.pipeline, table.table, epoch_text(flag.window.lo), std::to_string(flag.since)});
    return ok_status();
  });
}

Result<std::optional<std::int64_t>> PgStateStore::count_input_changes(PgConnection& tx,
                                                                     const std::optional<TableKey>& own,
                                                                     const std::vector<TableKey>& changed) {
  // One order for every count's lock, whoever takes them (a table that is
  // both an input and a dependent takes its own and its dependents'):
  // two records never wait for each other in a circle.
  std::vector<std::pair<TableKey, bool>> rows;  // (table, its own)
  if (own) rows.emplace_back(*own, true);
  for (const TableKey& t : changed) rows.emplace_back(t, false);
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return as_result([&] {
    std::optional<std::int64_t> counted;
    for (const auto& [table, is_own] : rows) {
      if (is_own) {
        const PgResult r = tx.exec_prepared(
            "select changes from tidemark.input_changes where pipeline = $1 and table_name = $2 for share",
            {table.pipeline, table.table});
        counted = r.rows() == 0 ? 0 : r.integer(0, 0);
      } else {
        tx.exec_prepared(
            "insert into tidemark.input_changes (pipeline, table_name, changes) values ($1, $2, 1)"
            " on conflict (pipeline, table_name) do update set changes = tidemark.input_changes.changes + 1",
            {table.pipeline, table.table});
      }
    }
    return counted;
  });
}

Status PgStateStore::flag_partitions(PgConnection& tx, const DownstreamRecheck& recheck) {
  return as_result([&] {
    tx.exec_prepared(
        "update tidemark.partitions p set recheck = $3, recheck_since = clock_timestamp()"
        " from jsonb_array_elements($1::jsonb) t where p.pipeline = t ->> 0 and p.table_name = t ->> 1"
        " and p.status = 'done' and p.partition_hi > to_timestamp($2::bigint)",
        {json_parameter(table_keys_json(recheck.tables)), epoch_text(recheck.from), recheck.because});
    return ok_status();
  });
}

Status PgStateStore::flag_downstream(const DownstreamRecheck& recheck) {
  // The count first, in a statement of its own: its lock is what a
  // dependent's write waits for as it marks a partition done, so that the
  // flags below see every partition that write marks, or the write sees
  // the count.
  const auto counted = count_input_changes(connection_, std::nullopt, recheck.tables);
  if (!counted) return counted.failure();
  return flag_partitions(connection_, recheck);
}

Result<InputsRead> PgStateStore::read_inputs(const TableKey& reader, const std::vector<TableRef>& inputs) {
  nlohmann::json asked = nlohmann::json::array();
  for (const TableRef& input : inputs) {
    asked.push_back({input.pipeline, input.table, input.mode == TableMode::Partition});
  }
  return as_result([&] {
    // A partition input's done partitions, from its first on, end at the
    // first one whose end no done partition starts at: its first gap. The
    // reader's count of changes is made to exist, so that a write can
    // lock it (record_step).
    const PgResult r = connection_.exec_prepared(R"SQL(
with counted as (
  insert into tidemark.input_changes (pipeline, table_name) values ($2, $3)
  on conflict (pipeline, table_name) do nothing)
select i.n, w.value, w.value_type,
       (select extract(epoch from min(p.partition_hi))::bigint from tidemark.partitions p
        where (i.x ->> 2)::boolean and p.pipeline = i.x ->> 0 and p.table_name = i.x ->> 1 and p.status = 'done'
          and not exists (select from tidemark.partitions n
                          where n.pipeline = p.pipeline and n.table_name = p.table_name and n.status = 'done'
                            and n.partition_lo = p.partition_hi)) as done_until,
       coalesce((select changes from tidemark.input_changes c where c.pipeline = $2 and c.table_name = $3), 0)
         as changes
from jsonb_array_elements($1::jsonb) with ordinality i(x, n)
left join tidemark.watermarks w on not (i.x ->> 2)::boolean and w.pipeline = i.x ->> 0 and w.table_name = i.x ->> 1
order by i.n
)SQL",
                                                  {json_parameter(asked), reader.pipeline, reader.table});
    if (r.rows() != static_cast<int>(inputs.size())) std::abort();  // one row per input asked
    const ResultColumns c(r);
    InputsRead out;
    out.inputs.resize(inputs.size());
    for (int i = 0; i < r.rows(); ++i) {
      InputState& state = out.inputs[static_cast<std::size_t>(i)];
      if (!r.is_null(i, c("value"))) {
        const auto value = cursor_from_stored(r.text(i, c("value_type")), r.text(i, c("value")));
        if (!value) {
          return Result<InputsRead>(permanent_error("stored watermark of input " +
                                                    inputs[static_cast<std::size_t>(i)].display() + ": " +
                                                    value.error()));
        }
        state.watermark = StoredWatermark{*value, r.text(i, c("value_type")) == kSnapshotValueType};
      }
      if (!r.is_null(i, c("done_until"))) {
        state.partitions_done_until = Instant(std::chrono::seconds(r.integer(i, c("done_until"))));
      }
      out.changes = r.integer(i, c("changes"));
    }
    return Result<InputsRead>(std::move(out));
  });
}

Result<RunId> PgStateStore::record_run(const RunStart& start, const RunEnd& end) {
  return as_result([&] {
    connection_.rollback_quietly();
    static const std::string statement = run_row_sql(R"SQL(
insert into tidemark.runs (pipeline, table_name, trigger, kind, host, pid, scheduled_for, finished_at, {end_names})
select s.pipeline, s.table_name, s.trigger, s.kind, $3, $4, to_timestamp($5::bigint), now(), {end_values}
from jsonb_to_record($1::jsonb) as s({start_columns}), jsonb_to_record($2::jsonb) as e({end_columns})
returning run_id
)SQL");
    const PgResult r = connection_.exec_prepared(
        statement, {json_parameter(run_start_columns(start)), json_parameter(run_end_columns(end)), host_,
                    std::to_string(::getpid()),
                    firing_ ? std::optional<std::string>(std::to_string(firing_->time_since_epoch().count()))
                            : std::nullopt});
    return static_cast<RunId>(r.integer(0, 0));
  });
}

void PgStateStore::announce_moved(const TableKey& table) {
  // Outside a transaction the notification goes out at once; one that
  // fails is only a dependent that waits for its schedule.
  const Status sent = as_result([&] {
    connection_.exec_prepared("select pg_notify($1, $2)",
                              {std::string(kMovedChannel), json_parameter(table_keys_json({table}).at(0))});
    return ok_status();
  });
  if (!sent) connection_.rollback_quietly();
}

Result<std::vector<LoadRange>> PgStateStore::load_ranges(const TableKey& table) {
  return as_result([&] {
    const PgResult r = connection_.exec(
        "select range_no, first_page, end_page, done_by is not null from tidemark.load_ranges"
        " where pipeline = $1 and table_name = $2 order by range_no",
        {table.pipeline, table.table});
    std::vector<LoadRange> out;
    for (int i = 0; i < r.rows(); ++i) {
      LoadRange range;
      range.index = static_cast<int>(r.integer(i, 0));
      range.pages.first = r.integer(i, 1);
      if (!r.is_null(i, 2)) range.pages.end = r.integer(i, 2);
      range.done = r.boolean(i, 3);
      out.push_back(range);
    }
    return out;
  });
}

Status PgStateStore::plan_load_ranges(const TableKey& table, RunId run, const std::vector<PageRange>& ranges) {
  nlohmann::json planned = nlohmann::json::array();
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    planned.push_back({{"range_no", i},
                       {"first_page", ranges[i].first},
                       {"end_page", ranges[i].end ? nlohmann::json(*ranges[i].end) : nlohmann::json()}});
  }
  const Status planned_ok = as_result([&] {
    // One statement: the plan before is gone exactly when this one is there.
    connection_.exec_prepared(R"SQL(
with gone as (delete from tidemark.load_ranges where pipeline = $1 and table_name = $2)
insert into tidemark.load_ranges (pipeline, table_name, range_no, first_page, end_page, planned_by)
select $1, $2, r.range_no, r.first_page, r.end_page, $3::bigint
from jsonb_to_recordset($4::jsonb) as r(range_no integer, first_page bigint, end_page bigint)
on conflict (pipeline, table_name, range_no) do update
set first_page = excluded.first_page, end_page = excluded.end_page, planned_by = excluded.planned_by,
    done_by = null, done_at = null
)SQL",
                              {table.pipeline, table.table, std::to_string(run), json_parameter(planned)});
    return ok_status();
  });
  if (!planned_ok) connection_.rollback_quietly();
  return planned_ok;
}

Result<WatermarkRewound> PgStateStore::rewind_watermark(const WatermarkRewind& rewind) {
  const TableKey& table = rewind.table;
  auto rewound = as_result([&] {
    connection_.exec("begin");
    // The lock first, then the read: under READ COMMITTED each statement
    // takes a new snapshot, so the read below sees every watermark a run
    // committed before it let the lock go.
    if (!connection_.exec("select pg_try_advisory_xact_lock($1::bigint)", {std::to_string(run_lock_key(RunLock{table, std::nullopt}))}).boolean(0, 0)) {
      connection_.exec("rollback");
      return WatermarkRewound{};
    }
    const PgResult r = connection_.exec(R"SQL(
with previous as (
  select value from tidemark.watermarks where pipeline = $1 and table_name = $2 for update),
written as (
  insert into tidemark.watermarks (pipeline, table_name, value, value_type, moved_at, updated_at)
  values ($1, $2, $3, $4, now(), now()) on conflict (pipeline, table_name) do update
  set value = excluded.value, value_type = excluded.value_type, moved_at = now(), updated_at = now()
  returning 1),
audit as (
  insert into tidemark.watermark_resets (pipeline, table_name, old_value, new_value, reason, reset_by)
  values ($1, $2, (select value from previous), $3, $5, $6)
  returning 1)
select (select value from previous), (select count(*) from written), (select count(*) from audit)
)SQL",
                                        {table.pipeline, table.table, cursor_to_text(rewind.to),
                                         std::string(cursor_type_name(rewind.to.type)), rewind.reason,
                                         rewind.reset_by});
    if (rewind.downstream) {
      const Status flagged = flag_downstream(*rewind.downstream);
      if (!flagged) throw PgError(flagged.error_kind(), flagged.error());
    }
    connection_.exec("commit");
    WatermarkRewound out;
    out.done = true;
    out.old_value = r.optional_text(0, 0);
    return out;
  });
  if (!rewound) connection_.rollback_quietly();
  return rewound;
}

}  // namespace tidemark
