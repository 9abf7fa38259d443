#include "daemon/pg/state/pause_book.h"

#include <nlohmann/json.hpp>

#include "daemon/pg/libpq/json_parameter.h"
#include "daemon/pg/state/table_keys_json.h"
#include "daemon/pg/libpq/pg_error.h"

namespace tidemark {
namespace {

// The pg_advisory_xact_lock key that serialises pause and resume.
constexpr long long kPauseLockKey = 0x7469646d61726b02LL;  // "tidmark\x02"

Pause pause_from(const nlohmann::json& row) {
  Pause p;
  p.pipeline = row.at(0).get<std::string>();
  p.table = row.at(1).get<std::string>();
  p.reason = row.at(2).get<std::string>();
  p.paused_by = row.at(3).get<std::string>();
  p.paused_at = row.at(4).get<double>();
  return p;
}

// A pause's columns as one JSON array, in pause_from's order.
constexpr const char* kPauseJson =
    "jsonb_build_array(pipeline, table_name, reason, paused_by, extract(epoch from paused_at)::float8)";

}  // namespace

bool PauseBook::has_pauses() {
  // Only a yes is kept: a daemon reads before its schema is migrated.
  if (!has_pauses_) has_pauses_ = connection_.exec("select to_regclass('tidemark.pauses') is not null").boolean(0, 0);
  const bool has = *has_pauses_;
  if (!has) has_pauses_.reset();
  return has;
}

Result<PauseWritten> PauseBook::pause(const Pause& pause) {
  auto written = as_result([&] {
    connection_.exec("begin");
    connection_.exec("select pg_advisory_xact_lock($1::bigint)", {std::to_string(kPauseLockKey)});
    const PgResult r = connection_.exec(std::string(R"SQL(
with before as (
  select 1 from tidemark.pauses where pipeline = $1 and table_name = $2),
stored as (
  insert into tidemark.pauses as p (pipeline, table_name, reason, paused_by)
  values ($1, $2, $3, $4)
  on conflict (pipeline, table_name) do update set reason = excluded.reason
  returning )SQL") + kPauseJson + R"SQL( as pause),
audit as (
  insert into tidemark.pause_events (pipeline, table_name, action, reason, acted_by)
  values ($1, $2, 'pause', $3, $4) returning 1)
select (select pause from stored), exists (select 1 from before), (select count(*) from audit),
       pg_notify($5, '')
)SQL",
                                        {pause.pipeline, pause.table, pause.reason, pause.paused_by,
                                         std::string(kPausesChannel)});
    connection_.exec("commit");
    PauseWritten out;
    out.pause = pause_from(nlohmann::json::parse(r.text(0, 0)));
    out.already_paused = r.boolean(0, 1);
    return out;
  });
  if (!written) connection_.rollback_quietly();
  return written;
}

Result<std::vector<Pause>> PauseBook::resume(const std::string& pipeline, const std::optional<std::string>& table,
                                             bool catch_up, const std::string& by) {
  auto resumed = as_result([&] {
    connection_.exec("begin");
    connection_.exec("select pg_advisory_xact_lock($1::bigint)", {std::to_string(kPauseLockKey)});
    // A null $2 ends the pipeline's pause and every one of its tables'.
    const PgResult r = connection_.exec(std::string(R"SQL(
with ended as (
  delete from tidemark.pauses where pipeline = $1 and ($2::text is null or table_name = $2)
  returning pipeline, table_name, reason, paused_by, paused_at),
audit as (
  insert into tidemark.pause_events (pipeline, table_name, action, reason, acted_by, catch_up, paused_since)
  select pipeline, table_name, 'resume', reason, $3, $4, paused_at from ended
  returning 1)
select coalesce(jsonb_agg()SQL") + kPauseJson + R"SQL( order by table_name), '[]'), (select count(*) from audit),
       pg_notify($5, '')
from ended
)SQL",
                                        {pipeline, table, by, catch_up ? "true" : "false",
                                         std::string(kPausesChannel)});
    connection_.exec("commit");
    std::vector<Pause> out;
    for (const auto& row : nlohmann::json::parse(r.text(0, 0))) out.push_back(pause_from(row));
    return out;
  });
  if (!resumed) connection_.rollback_quietly();
  return resumed;
}

Result<std::map<TableKey, std::int64_t>> PauseBook::resumed_at(const std::vector<TableKey>& tables) {
  return as_result([&] {
    std::map<TableKey, std::int64_t> out;
    if (tables.empty() || !has_pauses()) return out;
    // Floored to the second, as a run's start is: a firing in the same
    // second as the resume counts as missed, not as one to run.
    const PgResult r = connection_.exec(R"SQL(
select a ->> 0, a ->> 1, floor(extract(epoch from max(e.acted_at)))::bigint
from jsonb_array_elements($1::jsonb) a
join tidemark.pause_events e
  on e.pipeline = a ->> 0 and e.table_name in (a ->> 1, '') and e.action = 'resume' and not e.catch_up
group by 1, 2
)SQL",
                                        {json_parameter(table_keys_json(tables))});
    for (int i = 0; i < r.rows(); ++i) out[TableKey{r.text(i, 0), r.text(i, 1)}] = r.integer(i, 2);
    return out;
  });
}

Result<PauseReading> PauseBook::read(std::optional<std::int64_t> after) {
  return as_result([&] {
    PauseReading out;
    if (!has_pauses()) return out;
    const PgResult r = connection_.exec(std::string(R"SQL(
select (select coalesce(jsonb_agg()SQL") + kPauseJson + R"SQL(), '[]') from tidemark.pauses),
       (select coalesce(max(event_id), 0) from tidemark.pause_events),
       (select coalesce(jsonb_agg(jsonb_build_array(pipeline, table_name, extract(epoch from paused_since)::float8)
                                  order by event_id), '[]')
        from tidemark.pause_events
        where event_id > $1::bigint and action = 'resume' and catch_up)
)SQL",
                                        {after ? std::optional<std::string>(std::to_string(*after)) : std::nullopt});
    std::vector<Pause> pauses;
    for (const auto& row : nlohmann::json::parse(r.text(0, 0))) pauses.push_back(pause_from(row));
    out.pauses = PauseSet(std::move(pauses));
    out.last_event = r.integer(0, 1);
    for (const auto& row : nlohmann::json::parse(r.text(0, 2))) {
      out.catch_ups.push_back({row.at(0).get<std::string>(), row.at(1).get<std::string>(),
                               row.at(2).is_null() ? 0.0 : row.at(2).get<double>()});
    }
    return out;
  });
}

}  // namespace tidemark
