#include "daemon/pg_state_store.h"

#include <unistd.h>

#include <cstdint>

namespace tidemark {
namespace {

std::string lock_key_text(const TableKey& table) { return std::to_string(advisory_lock_key(table)); }

std::int64_t unix_seconds(Instant t) { return t.time_since_epoch().count(); }

std::string partition_key_text(const TableKey& table, const TimeWindow& partition) {
  return std::to_string(partition_lock_key(table, unix_seconds(partition.lo)));
}

// Instants cross the wire as Unix seconds: exact and zone-free.
std::string epoch_text(Instant t) { return std::to_string(unix_seconds(t)); }

std::optional<std::string> optional_cursor_text(const std::optional<CursorValue>& value) {
  if (!value) return std::nullopt;
  return cursor_to_text(*value);
}

}  // namespace

PgStateStore::PgStateStore(PgConnection& connection) : connection_(connection) {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) == 0) host_ = name;
}

Result<bool> PgStateStore::try_lock(const TableKey& table) {
  try {
    return connection_.exec("select pg_try_advisory_lock($1::bigint)", {lock_key_text(table)}).boolean(0, 0);
  } catch (const PgError& e) {
    return e.as_error();
  }
}

void PgStateStore::unlock(const TableKey& table) {
  release_lock(lock_key_text(table));
}

void PgStateStore::release_lock(const std::string& key) {
  try {
    connection_.rollback_quietly();
    // A lock that was not released must not stay on a session a pool
    // keeps: nobody else could take it until that session closed.
    if (!connection_.exec("select pg_advisory_unlock($1::bigint)", {key}).boolean(0, 0)) connection_.poison();
  } catch (const PgError&) {
    connection_.poison();  // the session is gone, and its lock with it; never reuse it
  }
}

Result<int> PgStateStore::fail_abandoned_runs(const TableKey& table, const std::optional<Window>& only) {
  try {
    const PgResult r = connection_.exec(
        "update tidemark.runs set status = 'failed', finished_at = now(),"
        "  error = 'abandoned: found running by a later run that holds the lock'"
        " where pipeline = $1 and table_name = $2 and status = 'running'"
        " and ($3::text is null or window_lo = $3)",
        {table.pipeline, table.table, only ? std::optional<std::string>(cursor_to_text(only->lo)) : std::nullopt});
    return static_cast<int>(r.affected());
  } catch (const PgError& e) {
    return e.as_error();
  }
}

Result<std::optional<StoredWatermark>> PgStateStore::read_watermark(const TableKey& table) {
  try {
    const PgResult r = connection_.exec(
        "select value, value_type from tidemark.watermarks where pipeline = $1 and table_name = $2",
        {table.pipeline, table.table});
    if (r.rows() == 0) return std::optional<StoredWatermark>();
    const auto value = cursor_from_stored(r.text(0, 1), r.text(0, 0));
    if (!value) return permanent_error("stored watermark of " + table.display() + ": " + value.error());
    return std::optional<StoredWatermark>(StoredWatermark{*value});
  } catch (const PgError& e) {
    return e.as_error();
  }
}

Result<RunId> PgStateStore::start_run(const RunStart& start) {
  try {
    return connection_
        .exec(
            "insert into tidemark.runs (pipeline, table_name, trigger, watermark_before, status, host, pid,"
            " window_lo, window_hi) values ($1, $2, $3, $4, 'running', $5, $6, $7, $8) returning run_id",
            {start.table.pipeline, start.table.table, std::string(run_trigger_name(start.trigger)),
             optional_cursor_text(start.watermark_before), host_, std::to_string(::getpid()),
             start.window ? std::optional<std::string>(cursor_to_text(start.window->lo)) : std::nullopt,
             start.window ? std::optional<std::string>(cursor_to_text(start.window->hi)) : std::nullopt})
        .integer(0, 0);
  } catch (const PgError& e) {
    return e.as_error();
  }
}

Result<OpenedRun> PgStateStore::open_run(const TableKey& table, RunTrigger trigger) {
  try {
    // One round trip. The statement's snapshot does not see the row it
    // inserts, so the new run is never counted as abandoned.
    const PgResult r = connection_.exec(R"SQL(
with abandoned as (
  update tidemark.runs set status = 'failed', finished_at = now(),
         error = 'abandoned: found running by a later run that holds the lock'
  where pipeline = $1 and table_name = $2 and status = 'running'
  returning 1),
stored as (
  select value, value_type from tidemark.watermarks where pipeline = $1 and table_name = $2),
started as (
  insert into tidemark.runs (pipeline, table_name, trigger, watermark_before, status, host, pid)
  values ($1, $2, $3, (select value from stored), 'running', $4, $5)
  returning run_id)
select (select run_id from started), (select count(*) from abandoned), value, value_type
from (select 1) one left join stored on true
)SQL",
                                        {table.pipeline, table.table, std::string(run_trigger_name(trigger)), host_,
                                         std::to_string(::getpid())});
    OpenedRun out;
    out.run = r.integer(0, 0);
    out.abandoned = static_cast<int>(r.integer(0, 1));
    if (!r.is_null(0, 2)) {
      const auto value = cursor_from_stored(r.text(0, 3), r.text(0, 2));
      if (!value) {
        const std::string error = "stored watermark of " + table.display() + ": " + value.error();
        RunEnd end;
        end.error = error;
        finish_run(out.run, end);  // the row just written must not stay `running`
        return Error{error};
      }
      out.watermark = StoredWatermark{*value};
    }
    return out;
  } catch (const PgError& e) {
    return e.as_error();
  }
}

void PgStateStore::check_lock_held(PgConnection& tx, std::int64_t signed_key, const std::string& what) {
  // A bigint advisory key shows in pg_locks as classid (high half), objid
  // (low half) and objsubid 1.
  const auto key = static_cast<std::uint64_t>(signed_key);
  const bool held = tx.exec(
                          "select exists (select 1 from pg_locks where locktype = 'advisory'"
                          " and pid = pg_backend_pid() and granted and database = (select oid from pg_database"
                          " where datname = current_database()) and classid = $1::bigint::oid"
                          " and objid = $2::bigint::oid and objsubid = 1)",
                          {std::to_string(key >> 32), std::to_string(key & 0xffffffffULL)})
                        .boolean(0, 0);
  if (!held) throw PgError("the lock of " + what + " is no longer held by this run; nothing committed");
}

void PgStateStore::record_progress(PgConnection& tx, const TableKey& table, RunId run,
                                   const std::optional<CursorValue>& expected, const std::optional<CursorValue>& next,
                                   const std::optional<Window>& window, const ChunkCounts& counts) {
  // One statement, one round trip: the lock check, the compare-and-set of
  // the watermark and the run row, each write conditional on the lock.
  const auto key = static_cast<std::uint64_t>(advisory_lock_key(table));
  const char* mode = !next ? "none" : expected ? "update" : "insert";
  const auto text = [](const std::optional<CursorValue>& v) {
    return v ? std::optional<std::string>(cursor_to_text(*v)) : std::nullopt;
  };
  const PgResult r = tx.exec(R"SQL(
with lock as (
  select exists (select 1 from pg_locks where locktype = 'advisory' and pid = pg_backend_pid() and granted
                 and database = (select oid from pg_database where datname = current_database())
                 and classid = $7::bigint::oid and objid = $8::bigint::oid and objsubid = 1) as held),
moved as (
  update tidemark.watermarks set value = $3, value_type = $4, updated_at = now(), last_run_id = $5,
         moved_at = case when value is distinct from $3 then now() else moved_at end
  where $14 = 'update' and (select held from lock) and pipeline = $1 and table_name = $2 and value = $6
        and value_type = $4
  returning 1),
created as (
  insert into tidemark.watermarks (pipeline, table_name, value, value_type, moved_at, updated_at, last_run_id)
  select $1, $2, $3, $4, now(), now(), $5 where $14 = 'insert' and (select held from lock)
  on conflict do nothing
  returning 1),
run as (
  update tidemark.runs set window_lo = coalesce(window_lo, $9), window_hi = coalesce($10, window_hi),
         watermark_after = coalesce($11, watermark_after), rows_read = rows_read + $12,
         rows_written = rows_written + $13
  where run_id = $5 and (select held from lock)
  returning 1)
select (select held from lock), (select count(*) from moved) + (select count(*) from created)
)SQL",
                             {table.pipeline, table.table, text(next),
                              next ? std::optional<std::string>(std::string(cursor_type_name(next->type))) : std::nullopt,
                              std::to_string(run), text(expected), std::to_string(key >> 32),
                              std::to_string(key & 0xffffffffULL), window ? text(window->lo) : std::nullopt,
                              window ? text(window->hi) : std::nullopt, text(next), std::to_string(counts.rows_read),
                              std::to_string(counts.rows_written), std::string(mode)});
  if (!r.boolean(0, 0)) {
    throw PgError("the lock of " + table.display() + " is no longer held by this run; nothing committed");
  }
  if (next && r.integer(0, 1) != 1) {
    throw PgError("the watermark of " + table.display() + " is no longer " +
                  (expected ? cursor_to_text(*expected) : std::string("unset")) +
                  ": another writer moved it; nothing committed");
  }
}

void PgStateStore::record_chunk(PgConnection& tx, const ChunkRequest& chunk, const ChunkCounts& counts) {
  record_progress(tx, chunk.table, chunk.run, chunk.watermark_before,
                  chunk.move_watermark ? std::optional<CursorValue>(chunk.watermark_after) : std::nullopt,
                  chunk.window, counts);
}

Status PgStateStore::move_watermark(const TableKey& table, RunId run, const std::optional<CursorValue>& expected,
                                    const CursorValue& next) {
  try {
    // A single statement commits on its own: all of it or nothing.
    record_progress(connection_, table, run, expected, next, std::nullopt, ChunkCounts{});
    return ok_status();
  } catch (const PgError& e) {
    return e.as_error();
  }
}

Status PgStateStore::finish_run(RunId run, const RunEnd& end) {
  try {
    connection_.rollback_quietly();
    connection_.exec(
        "update tidemark.runs set status = $2, error = $3, finished_at = now(),"
        " window_lo = coalesce($4, window_lo), window_hi = coalesce($5, window_hi),"
        " watermark_after = coalesce($6, watermark_after), rows_read = $7, rows_written = $8,"
        " horizon_lag_seconds = $9, horizon_held_by = nullif($10, ''), watermark_ahead = $11,"
        " null_cursor_rows = $12 where run_id = $1",
        {std::to_string(run), std::string(end.success ? "success" : "failed"),
         end.success ? std::nullopt : std::optional<std::string>(end.error),
         end.window ? std::optional<std::string>(cursor_to_text(end.window->lo)) : std::nullopt,
         end.window ? std::optional<std::string>(cursor_to_text(end.window->hi)) : std::nullopt,
         optional_cursor_text(end.watermark_after), std::to_string(end.rows_read), std::to_string(end.rows_written),
         end.horizon.lag_seconds ? std::optional<std::string>(std::to_string(*end.horizon.lag_seconds)) : std::nullopt,
         end.horizon.held_by, std::string(end.horizon.watermark_ahead ? "true" : "false"),
         end.horizon.null_cursor_rows ? std::optional<std::string>(std::to_string(*end.horizon.null_cursor_rows))
                                      : std::nullopt});
    return ok_status();
  } catch (const PgError& e) {
    return e.as_error();
  }
}

Result<std::vector<CursorSample>> PgStateStore::read_cursor_samples(const TableKey& table, const std::string& source) {
  try {
    const PgResult r = connection_.exec(
        "select taken_at, max_value from tidemark.cursor_samples"
        " where pipeline = $1 and table_name = $2 and source = $3 order by taken_at",
        {table.pipeline, table.table, source});
    std::vector<CursorSample> out;
    for (int i = 0; i < r.rows(); ++i) out.push_back(CursorSample{r.integer(i, 0), r.integer(i, 1)});
    return out;
  } catch (const PgError& e) {
    return e.as_error();
  }
}

Status PgStateStore::save_cursor_samples(const TableKey& table, const std::string& source,
                                         std::optional<SourceMicros> forget_before,
                                         const std::optional<CursorSample>& add) {
  try {
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
  } catch (const PgError& e) {
    return e.as_error();
  }
}

void PgStateStore::record_partition(PgConnection& tx, const PartitionRequest& partition, const ChunkCounts& counts) {
  check_lock_held(tx, partition_lock_key(partition.table, unix_seconds(partition.window.lo)),
                  partition.table.display() + " partition " + partition.lo_date);
  tx.exec(
      "insert into tidemark.partitions (pipeline, table_name, partition_lo, partition_hi, status, run_id, updated_at)"
      " values ($1, $2, to_timestamp($3), to_timestamp($4), 'done', $5, now())"
      " on conflict (pipeline, table_name, partition_lo) do update"
      " set partition_hi = excluded.partition_hi, status = 'done', run_id = excluded.run_id, updated_at = now()",
      {partition.table.pipeline, partition.table.table, epoch_text(partition.window.lo),
       epoch_text(partition.window.hi), std::to_string(partition.run)});
  tx.exec("update tidemark.runs set rows_read = $2, rows_written = $3 where run_id = $1",
          {std::to_string(partition.run), std::to_string(counts.rows_read), std::to_string(counts.rows_written)});
}

Result<bool> PgStateStore::lock_partition(const TableKey& table, const TimeWindow& partition, bool wait) {
  try {
    if (!wait) {
      return connection_.exec("select pg_try_advisory_lock($1::bigint)", {partition_key_text(table, partition)})
          .boolean(0, 0);
    }
    // Waits for a scheduled run or another backfill writing the same
    // partition, but not for ever.
    connection_.exec("select set_config('lock_timeout', '300s', false)");
    try {
      connection_.exec("select pg_advisory_lock($1::bigint)", {partition_key_text(table, partition)});
    } catch (const PgError& e) {
      connection_.exec("select set_config('lock_timeout', '0', false)");
      if (e.sqlstate() == "55P03") return false;  // lock_not_available
      throw;
    }
    connection_.exec("select set_config('lock_timeout', '0', false)");
    return true;
  } catch (const PgError& e) {
    return e.as_error();
  }
}

void PgStateStore::unlock_partition(const TableKey& table, const TimeWindow& partition) {
  release_lock(partition_key_text(table, partition));
}

Result<std::optional<Instant>> PgStateStore::last_done_partition(const TableKey& table) {
  try {
    const PgResult r = connection_.exec(
        "select extract(epoch from max(partition_hi))::bigint from tidemark.partitions"
        " where pipeline = $1 and table_name = $2 and status = 'done'",
        {table.pipeline, table.table});
    if (r.is_null(0, 0)) return std::optional<Instant>();
    return std::optional<Instant>(Instant(std::chrono::seconds(r.integer(0, 0))));
  } catch (const PgError& e) {
    return e.as_error();
  }
}

Result<std::vector<Instant>> PgStateStore::done_partitions(const TableKey& table, Instant from, Instant to) {
  try {
    const PgResult r = connection_.exec(
        "select extract(epoch from partition_lo)::bigint from tidemark.partitions"
        " where pipeline = $1 and table_name = $2 and status = 'done'"
        " and partition_lo >= to_timestamp($3) and partition_lo < to_timestamp($4)",
        {table.pipeline, table.table, epoch_text(from), epoch_text(to)});
    std::vector<Instant> out;
    for (int i = 0; i < r.rows(); ++i) out.emplace_back(std::chrono::seconds(r.integer(i, 0)));
    return out;
  } catch (const PgError& e) {
    return e.as_error();
  }
}

Status PgStateStore::mark_partition_failed(const TableKey& table, const TimeWindow& partition, RunId run) {
  try {
    connection_.rollback_quietly();
    connection_.exec(
        "insert into tidemark.partitions (pipeline, table_name, partition_lo, partition_hi, status, run_id)"
        " values ($1, $2, to_timestamp($3), to_timestamp($4), 'failed', $5)"
        " on conflict (pipeline, table_name, partition_lo) do update set status = 'failed', run_id = excluded.run_id,"
        " updated_at = now() where tidemark.partitions.status <> 'done'",
        {table.pipeline, table.table, epoch_text(partition.lo), epoch_text(partition.hi), std::to_string(run)});
    return ok_status();
  } catch (const PgError& e) {
    return e.as_error();
  }
}

Result<WatermarkRewound> PgStateStore::rewind_watermark(const WatermarkRewind& rewind) {
  const TableKey& table = rewind.table;
  try {
    connection_.exec("begin");
    // The lock first, then the read: under READ COMMITTED each statement
    // takes a new snapshot, so the read below sees every watermark a run
    // committed before it let the lock go.
    if (!connection_.exec("select pg_try_advisory_xact_lock($1::bigint)", {lock_key_text(table)}).boolean(0, 0)) {
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
    connection_.exec("commit");
    WatermarkRewound out;
    out.done = true;
    out.old_value = r.optional_text(0, 0);
    return out;
  } catch (const PgError& e) {
    connection_.rollback_quietly();
    return e.as_error();
  }
}

}  // namespace tidemark
