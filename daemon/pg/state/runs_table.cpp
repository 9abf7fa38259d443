#include "daemon/pg/state/runs_table.h"

#include <array>
#include <utility>

namespace tidemark {

std::string_view run_row_status_word(RunRowStatus status) {
  switch (status) {
    case RunRowStatus::Running: return "running";
    case RunRowStatus::Success: return "success";
    case RunRowStatus::Failed: return "failed";
  }
  return "failed";
}

namespace {

// How a run's end writes a column over what its row holds.
enum class EndWrite {
  Set,            // the end's value
  KeepWhenNull,   // the end's value, else the row's (what the steps recorded)
  NullWhenEmpty,  // the end's value, an empty text as NULL
};

struct EndColumn {
  std::string_view name;
  std::string_view type;
  EndWrite write;
};

// The end's columns, each named once here: run_end_columns gives a value
// for each (its test checks that), and every statement that writes an end
// spells them from this list.
constexpr EndColumn kEndColumns[] = {
    {"status", "text", EndWrite::Set},
    {"error", "text", EndWrite::Set},
    {"error_kind", "text", EndWrite::Set},
    {"window_lo", "text", EndWrite::KeepWhenNull},
    {"window_hi", "text", EndWrite::KeepWhenNull},
    {"watermark_after", "text", EndWrite::KeepWhenNull},
    {"rows_read", "bigint", EndWrite::Set},
    {"rows_written", "bigint", EndWrite::Set},
    {"horizon_lag_seconds", "double precision", EndWrite::Set},
    {"horizon_held_by", "text", EndWrite::NullWhenEmpty},
    {"watermark_ahead", "boolean", EndWrite::Set},
    {"null_cursor_rows", "bigint", EndWrite::Set},
    {"infinite_cursor_rows", "bigint", EndWrite::Set},
    {"schema_drift", "text", EndWrite::Set},
    {"rows_deleted", "bigint", EndWrite::KeepWhenNull},
    {"rows_missing", "bigint", EndWrite::KeepWhenNull},
    {"rows_changed", "bigint", EndWrite::KeepWhenNull},
    {"source_changes", "bigint", EndWrite::Set},
    {"unseen_changes", "bigint", EndWrite::Set},
    {"input_wait_seconds", "double precision", EndWrite::Set},
    {"rewrite_reason", "text", EndWrite::Set},
};

// The end's value of `c` read from the record `e`, as a new row takes it.
std::string end_value(const EndColumn& c) {
  const std::string value = "e." + std::string(c.name);
  return c.write == EndWrite::NullWhenEmpty ? "nullif(" + value + ", '')" : value;
}

// The lists the marks {end_columns}, {end_names}, {end_values} and
// {end_assignments} stand for.
std::string end_list(std::string_view mark) {
  std::string out;
  for (const EndColumn& c : kEndColumns) {
    if (!out.empty()) out += ", ";
    const std::string name(c.name);
    if (mark == "{end_columns}") {
      out += name + " " + std::string(c.type);
    } else if (mark == "{end_names}") {
      out += name;
    } else if (mark == "{end_values}") {
      out += end_value(c);
    } else {
      out += name + " = " +
             (c.write == EndWrite::KeepWhenNull ? "coalesce(e." + name + ", r." + name + ")" : end_value(c));
    }
  }
  return out;
}

std::optional<std::string> cursor_text(const std::optional<CursorValue>& value) {
  if (!value) return std::nullopt;
  return cursor_to_text(*value);
}

}  // namespace

nlohmann::json run_start_columns(const RunStart& start) {
  return {{"pipeline", start.table.pipeline},
          {"table_name", start.table.table},
          {"trigger", std::string(run_trigger_name(start.trigger))},
          {"kind", std::string(job_kind(job_kind_of(start.trigger)).word)}};
}

nlohmann::json run_end_columns(const RunEnd& end) {
  const std::optional<ReconcileCounts>& reconcile = end.reconcile;
  const std::optional<ChangeCount>& changes = end.changes;
  return {
      {"status", std::string(run_row_status_word(end.success ? RunRowStatus::Success : RunRowStatus::Failed))},
      {"error", end.success ? nlohmann::json() : nlohmann::json(end.error)},
      {"error_kind", end.success ? nlohmann::json() : nlohmann::json(std::string(error_kind_name(end.error_kind)))},
      {"window_lo", column_value(end.window ? cursor_text(end.window->lo) : std::nullopt)},
      {"window_hi", column_value(end.window ? cursor_text(end.window->hi) : std::nullopt)},
      {"watermark_after", column_value(cursor_text(end.watermark_after))},
      {"rows_read", end.rows_read},
      {"rows_written", end.rows_written},
      {"horizon_lag_seconds", column_value(end.horizon.lag_seconds)},
      {"horizon_held_by", end.horizon.held_by},
      {"watermark_ahead", end.horizon.watermark_ahead},
      {"null_cursor_rows", column_value(end.horizon.null_cursor_rows)},
      {"infinite_cursor_rows", column_value(end.horizon.infinite_cursor_rows)},
      {"schema_drift", column_value(end.schema_drift)},
      {"rows_deleted", reconcile ? nlohmann::json(reconcile->deleted) : nlohmann::json()},
      {"rows_missing", reconcile ? nlohmann::json(reconcile->missing) : nlohmann::json()},
      {"rows_changed", reconcile ? nlohmann::json(reconcile->changed) : nlohmann::json()},
      {"source_changes", changes ? nlohmann::json(changes->counted) : nlohmann::json()},
      {"unseen_changes", changes ? nlohmann::json(changes->unseen) : nlohmann::json()},
      {"input_wait_seconds", column_value(end.horizon.input_wait_seconds)},
      {"rewrite_reason", end.rewrite_reason.empty() ? nlohmann::json() : nlohmann::json(end.rewrite_reason)},
  };
}

RunsSchema runs_schema_at(int state_schema_version) {
  if (state_schema_version >= 16) return RunsSchema::Current;
  return state_schema_version >= 15 ? RunsSchema::WithKind : RunsSchema::BeforeKind;
}

std::string run_row_sql(std::string_view sql, RunsSchema schema) {
  static const std::string word[] = {
      "'" + std::string(run_row_status_word(RunRowStatus::Running)) + "'",
      "'" + std::string(run_row_status_word(RunRowStatus::Success)) + "'",
      "'" + std::string(run_row_status_word(RunRowStatus::Failed)) + "'",
      "'" + std::string(job_kind(JobKind::Load).word) + "'",
      "'" + std::string(job_kind(JobKind::Reconcile).word) + "'",
      "'" + std::string(error_kind_name(ErrorKind::Transient)) + "'",
  };
  const bool with_kind = schema != RunsSchema::BeforeKind;
  static const std::string is_load = "kind = " + word[3];
  static const std::string is_reconcile = "kind = " + word[4];
  static const std::string before_kind_load = "trigger <> " + word[4];
  static const std::string before_kind_reconcile = "trigger = " + word[4];
  static const std::string end_columns = end_list("{end_columns}");
  static const std::string end_names = end_list("{end_names}");
  static const std::string end_values = end_list("{end_values}");
  static const std::string end_assignments = end_list("{end_assignments}");
  const std::array<std::pair<std::string_view, std::string_view>, 13> marks{{
      {"{is_load}", with_kind ? is_load : before_kind_load},
      {"{is_reconcile}", with_kind ? is_reconcile : before_kind_reconcile},
      {"{running}", word[0]},
      {"{success}", word[1]},
      {"{failed}", word[2]},
      {"{load}", word[3]},
      {"{reconcile}", word[4]},
      {"{transient}", word[5]},
      {"{start_columns}", "pipeline text, table_name text, trigger text, kind text"},
      {"{end_columns}", end_columns},
      {"{end_names}", end_names},
      {"{end_values}", end_values},
      {"{end_assignments}", end_assignments},
  }};
  std::string out;
  out.reserve(sql.size());
  std::size_t at = 0;
  while (at < sql.size()) {
    bool replaced = false;
    if (sql.substr(at, 3) == "{r.") {
      // to_jsonb builds the whole row for each read: a Current schema's
      // columns are read as they are (a tenth of the time at 10,000 tables).
      const std::size_t end = sql.find('}', at);
      const std::string_view name = sql.substr(at + 3, end - at - 3);
      if (schema == RunsSchema::Current) {
        out.append("r.").append(name);
      } else {
        out.append("(to_jsonb(r) ->> '").append(name).append("')");
      }
      at = end + 1;
      continue;
    }
    if (sql[at] == '{') {
      for (const auto& [mark, text] : marks) {
        if (sql.substr(at, mark.size()) != mark) continue;
        out.append(text);
        at += mark.size();
        replaced = true;
        break;
      }
    }
    if (!replaced) out.push_back(sql[at++]);
  }
  return out;
}

const std::string& prune_batch_sql() {
  // The next batch of runs by run_id after the last batch's, and of them
  // those to remove: a run is removed only once a later run of the same
  // trigger on its table has succeeded, and never while running or while
  // a watermark or a partition names it as its writer. run_id follows
  // started_at (both are set by the statement that inserts the run), so
  // the pass ends at the first batch that reaches a run inside the
  // retention. The lock's two-integer key ('tide' in ASCII, then 1 for
  // pruning) lives apart from the tables' one-bigint run locks.
  static const std::string statement = run_row_sql(R"SQL(
with lock as (select pg_try_advisory_xact_lock(1953064037, 1) as held),
batch as (
  select r.run_id, r.pipeline, r.table_name, r.trigger, r.status, r.started_at
  from tidemark.runs r, lock
  where lock.held and r.run_id > $2::bigint
  order by r.run_id
  limit $3::bigint),
doomed as (
  select b.run_id from batch b
  where b.started_at < now() - $1::interval and b.status <> {running}
    and exists (select from tidemark.runs n
                where n.pipeline = b.pipeline and n.table_name = b.table_name and n.status = {success}
                      and n.trigger = b.trigger and n.run_id > b.run_id)
    and not exists (select from tidemark.watermarks w where w.last_run_id = b.run_id)
    and not exists (select from tidemark.partitions p where p.run_id = b.run_id)),
gone as (delete from tidemark.runs d where d.run_id in (select run_id from doomed) returning 1)
select (select held from lock) as held, (select count(*) from gone) as deleted,
       coalesce((select max(run_id) from batch), 0) as last_run_id,
       coalesce((select bool_or(started_at >= now() - $1::interval) from batch), true) as reached
)SQL");
  return statement;
}

}  // namespace tidemark
