// The safe horizon against a real PostgreSQL (SPEC §3): transactions still
// open on the source hold hi back, whatever stamps their rows; what cannot
// be seen is refused rather than guessed; a watermark ahead of the source
// is reported and never moved; source sessions are read-only.
#include <doctest/doctest.h>

#include <unistd.h>

#include <nlohmann/json.hpp>
#include <limits>
#include <sstream>
#include <thread>
#include <tuple>

#include "core/watermark/safe_horizon.h"
#include "daemon/commands/commands.h"
#include "daemon/commands/validate_command.h"
#include "daemon/pg/data/pipeline_connections.h"
#include "daemon/pg/libpq/source_session.h"
#include "pg_test_env.h"

namespace tidemark {
namespace {

using testing::PgTestEnv;

std::string events_pipeline(const std::string& cursor, const std::string& extra = "") {
  return "pipeline: app\nsource: source\ntarget: target\nschedule: \"* * * * *\"\ntables:\n"
         "  - name: events\n    source_table: public.events\n    target_table: public.events\n"
         "    key: [id]\n    cursor: " +
         cursor + "\n" + extra;
}

struct EventsFixture {
  PgTestEnv env;
  testing::TableRuns runs;

  static PgTestEnv& with_tables(PgTestEnv& env, const std::string& columns) {
    env.source().exec("create table public.events " + columns);
    env.target().exec("create table public.events " + columns);
    return env;
  }

  EventsFixture(const std::string& columns, const std::string& cursor, const std::string& extra = "")
      : runs(with_tables(env, columns), env.config(events_pipeline(cursor, extra))) {}

  JobEnded run() { return runs.run("app", "events"); }

  std::vector<std::string> source_rows() { return PgTestEnv::rows(env.source(), "select * from events order by id"); }
  std::vector<std::string> target_rows() { return PgTestEnv::rows(env.target(), "select * from events order by id"); }
  std::string watermark() {
    const auto r = PgTestEnv::rows(env.state(), "select value from tidemark.watermarks where table_name = 'events'");
    return r.empty() ? "" : r[0];
  }
  // A second client of the source database.
  std::unique_ptr<PgConnection> writer() {
    return std::make_unique<PgConnection>(env.dsn("source"), "writer");
  }
};

const char* const kTimeEvents = "(id bigint primary key, v int not null default 0, updated_at timestamptz default now())";
const char* const kIdEvents = "(id bigserial primary key, v int not null default 0)";

}  // namespace

TEST_CASE("a transaction that stamped now() and has not written yet holds hi back (lookback 0)") {
  EventsFixture f(kTimeEvents, "updated_at");
  f.env.source().exec("insert into events (id, updated_at) values (1, now() - interval '1 minute')");
  const auto late = f.writer();
  late->exec("begin");
  const std::string started = PgTestEnv::rows(*late, "select now()")[0];  // its rows get this stamp
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));           // past the margin, so the clock alone would pass it

  // The rule before the safe horizon: the clock, lowered only by
  // transactions that hold an xid. It would have claimed the row below.
  const std::string old_rule_hi = PgTestEnv::rows(
      f.env.source(),
      "select least(clock_timestamp(), (select min(xact_start) from pg_stat_activity where backend_xid is not null"
      " and datname = current_database() and pid <> pg_backend_pid()))")[0];
  REQUIRE(f.run().summary.status == RunStatus::Success);
  CHECK(PgTestEnv::rows(f.env.source(), "select '" + old_rule_hi + "'::timestamptz > '" + started +
                                            "'::timestamptz")[0] == "t");
  CHECK(PgTestEnv::rows(f.env.source(), "select '" + f.watermark() + "'::timestamptz <= '" + started +
                                            "'::timestamptz")[0] == "t");

  late->exec("insert into events (id) values (2)");  // stamped `started`, committed late
  late->exec("commit");
  testing::wait_past_start_report_margin();
  REQUIRE(f.run().summary.status == RunStatus::Success);
  CHECK(f.target_rows() == f.source_rows());
  CHECK(f.target_rows().size() == 2);
}

TEST_CASE("the run records what held hi back: lag and the holding session") {
  EventsFixture f(kTimeEvents, "updated_at");
  const auto late = f.writer();
  late->exec("set application_name = 'slow writer'");
  late->exec("begin");
  late->exec("select now()");
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the lag is the clock's distance from its start
  const JobEnded r = f.run();
  REQUIRE(r.summary.status == RunStatus::Success);
  REQUIRE(r.summary.horizon.lag_seconds);
  CHECK(*r.summary.horizon.lag_seconds >= 1.4);
  CHECK(r.summary.horizon.held_by.find("slow writer") != std::string::npos);
  CHECK(r.summary.horizon.held_by.find("idle in transaction") != std::string::npos);
  const auto row = PgTestEnv::rows(f.env.state(),
                                   "select horizon_lag_seconds >= 1.4, horizon_held_by like '%slow writer%'"
                                   " from tidemark.runs order by run_id desc limit 1");
  CHECK(row[0] == "t|t");
  late->exec("rollback");
}

TEST_CASE("integer cursors: ids taken by an open transaction are not passed, though later ids committed") {
  EventsFixture f(kIdEvents, "id");
  f.env.source().exec("insert into events (v) select 1 from generate_series(1, 3)");  // ids 1..3
  REQUIRE(f.run().summary.status == RunStatus::Success);
  CHECK(f.watermark() == "4");

  const auto late = f.writer();
  late->exec("begin");
  late->exec("insert into events (v) values (2)");                                    // takes id 4, not committed
  f.env.source().exec("insert into events (v) select 3 from generate_series(1, 5)");  // ids 5..9, committed
  // The rule before the safe horizon: max(id) + 1 = 10 would claim id 4.
  CHECK(PgTestEnv::rows(f.env.source(), "select max(id) + 1 from events")[0] == "10");
  REQUIRE(f.run().summary.status == RunStatus::Success);
  CHECK(f.watermark() == "4");  // the newest observation older than the open transaction
  CHECK_FALSE(f.run().summary.horizon.held_by.empty());

  late->exec("commit");
  REQUIRE(f.run().summary.status == RunStatus::Success);
  CHECK(f.watermark() == "10");
  CHECK(f.target_rows() == f.source_rows());
  CHECK(f.target_rows().size() == 9);
  // Observations older than the one in use are forgotten.
  CHECK(PgTestEnv::rows(f.env.state(), "select count(*) from tidemark.cursor_samples")[0] == "1");
}

TEST_CASE("regression: ids cached by a session (sequence CACHE > 1) committed below the watermark") {
  EventsFixture f(kIdEvents, "id");
  f.env.source().exec("alter sequence events_id_seq cache 10");
  const auto cached = f.writer();
  cached->exec("select nextval('events_id_seq')");            // 1; 2..10 wait in this session
  f.env.source().exec("insert into events (v) values (1)");   // 11, committed
  // Nothing is open, yet id 2 is still to come: the watermark 12 claimed it.
  const JobEnded refused = f.run();
  CHECK(refused.summary.status == RunStatus::Failed);
  CHECK(refused.summary.error.find("CACHE 10") != std::string::npos);
  CHECK(refused.summary.error.find("lookback") != std::string::npos);
  CHECK(f.watermark().empty());

  testing::TableRuns covered(f.env, f.env.config(events_pipeline("id", "    lookback: 100\n")));
  REQUIRE(covered.run("app", "events").summary.status == RunStatus::Success);
  cached->exec("insert into events (v) values (2)");          // 2
  const JobEnded accepted = covered.run("app", "events");
  CHECK(accepted.summary.status == RunStatus::Success);
  CHECK(accepted.summary.horizon.held_by.find("CACHE 10") != std::string::npos);
  CHECK(f.target_rows() == f.source_rows());
  CHECK(f.target_rows().size() == 2);
}

TEST_CASE("regression: validate passed lookback 0 for tables every run refuses: CACHE above 1, logical replication") {
  EventsFixture f(kIdEvents, "id");
  const auto validate = [&](std::string& err) {
    ValidateOptions cl;
    cl.config_path = f.env.write_config_files(events_pipeline("id"));
    std::ostringstream out, e;
    const int code = run_validate(cl, Instant{}, out, e);
    err = e.str();
    return code;
  };
  std::string err;
  f.env.source().exec("alter sequence events_id_seq cache 10");
  CHECK(validate(err) == 2);
  CHECK(err.find("lookback 0s is refused") != std::string::npos);
  CHECK(err.find("CACHE 10") != std::string::npos);
  f.env.source().exec(
      "alter sequence events_id_seq cache 1;"
      "create subscription tidemark_validate_sub connection 'dbname=postgres' publication p"
      " with (connect = false, slot_name = none);"
      "insert into pg_subscription_rel (srsubid, srrelid, srsubstate, srsublsn)"
      " select oid, 'public.events'::regclass, 'r', null from pg_subscription where subname = 'tidemark_validate_sub'");
  CHECK(validate(err) == 2);
  CHECK(err.find("tidemark_validate_sub") != std::string::npos);
  f.env.source().exec("delete from pg_subscription_rel; drop subscription tidemark_validate_sub");
  CHECK(validate(err) == 0);
}

TEST_CASE("regression: a row at the bigint maximum wedged every run with 'bigint out of range'") {
  EventsFixture f("(id bigint primary key, v int)", "id");
  f.env.source().exec("insert into events values (1, 1), (9223372036854775807, 2)");
  REQUIRE(f.run().summary.status == RunStatus::Success);
  CHECK(f.target_rows() == f.source_rows());
  f.env.source().exec("update events set v = 3 where id = 9223372036854775807");
  const JobEnded again = f.run();
  CHECK(again.summary.status == RunStatus::Success);
  CHECK(f.watermark() == "9223372036854775807");
}

TEST_CASE("regression: an identity table whose newest rows were deleted was reported ahead, and stale") {
  EventsFixture f(kIdEvents, "id");
  f.env.source().exec("insert into events (v) select 1 from generate_series(1, 10)");  // ids 1..10
  REQUIRE(f.run().summary.status == RunStatus::Success);
  CHECK(f.watermark() == "11");
  // max(id) + 1 is now 6, below the watermark, yet ids 6..10 were handed out.
  f.env.source().exec("delete from events where id > 5");
  const JobEnded after_delete = f.run();
  CHECK(after_delete.summary.status == RunStatus::Success);
  CHECK_FALSE(after_delete.summary.horizon.watermark_ahead);
  CHECK(f.watermark() == "11");
  f.env.source().exec("insert into events (v) values (2)");  // id 11
  REQUIRE(f.run().summary.status == RunStatus::Success);
  CHECK(f.watermark() == "12");

  // A sequence restarted below the watermark hands out ids it claims.
  f.env.source().exec("truncate events restart identity; insert into events (v) select 3 from generate_series(1, 3)");
  const JobEnded restarted = f.run();
  CHECK(restarted.summary.status == RunStatus::Success);
  CHECK(restarted.summary.horizon.watermark_ahead);
  CHECK(f.watermark() == "12");
}

TEST_CASE("a role that cannot see other sessions: lookback 0 is refused, a lookback is accepted") {
  PgTestEnv env;
  PgConnection admin(env.dsn("source"), "admin");
  const std::string role = "tidemark_plain_" + std::to_string(::getpid());
  admin.exec("drop role if exists " + role + "; create role " + role + " login");
  admin.exec("create table public.events (id bigint primary key, updated_at timestamptz not null);"
             "grant select on public.events to " + role + ";"
             "insert into events values (1, now() - interval '1 hour')");
  env.target().exec("create table public.events (id bigint primary key, updated_at timestamptz not null)");
  env.set_dsn("source", env.dsn("source") + " user=" + role);
  {
    testing::TableRuns runs(env, env.config(events_pipeline("updated_at")));
    const JobEnded refused = runs.run("app", "events");
    CHECK(refused.summary.status == RunStatus::Failed);
    CHECK(refused.summary.error.find("pg_monitor") != std::string::npos);
    CHECK(refused.summary.error.find("lookback") != std::string::npos);
  }
  // validate says so before any run does.
  ValidateOptions cl;
  cl.config_path = env.write_config_files(events_pipeline("updated_at"));
  std::ostringstream out, err;
  CHECK(run_validate(cl, Instant{}, out, err) == 2);
  CHECK(err.str().find("lookback 0s is refused") != std::string::npos);
  CHECK(err.str().find("pg_monitor") != std::string::npos);

  testing::TableRuns runs(env, env.config(events_pipeline("updated_at", "    lookback: 10m\n")));
  const JobEnded accepted = runs.run("app", "events");
  CHECK(accepted.summary.status == RunStatus::Success);
  CHECK(accepted.summary.horizon.held_by.find("cannot see other sessions") != std::string::npos);
  CHECK(PgTestEnv::rows(env.target(), "select count(*) from events")[0] == "1");
  cl.config_path = env.write_config_files(events_pipeline("updated_at", "    lookback: 10m\n"));
  std::ostringstream out2, err2;
  CHECK(run_validate(cl, Instant{}, out2, err2) == 0);
  CHECK(out2.str().find("cannot see other sessions' transactions (no pg_monitor)") != std::string::npos);
  admin.exec("grant pg_monitor to " + role);
  testing::TableRuns seen(env, env.config(events_pipeline("updated_at")));
  CHECK(seen.run("app", "events").summary.status == RunStatus::Success);
  admin.exec("drop owned by " + role + "; drop role " + role);
}

TEST_CASE("regression: a NOINHERIT role granted pg_monitor was taken to see every session, and saw none") {
  PgTestEnv env;
  PgConnection admin(env.dsn("source"), "admin");
  const std::string role = "tidemark_noinherit_" + std::to_string(::getpid());
  admin.exec("drop role if exists " + role + "; create role " + role + " login noinherit; grant pg_monitor to " + role);
  admin.exec("create table public.events (id bigint primary key, updated_at timestamptz not null default now());"
             "grant select on public.events to " + role + ";"
             "insert into events values (1, now() - interval '1 hour')");
  env.target().exec("create table public.events (id bigint primary key, updated_at timestamptz not null)");
  env.set_dsn("source", env.dsn("source") + " user=" + role);
  // Membership without inheritance: pg_stat_activity hides other roles'
  // xact_start from it until it SETs ROLE, so this writer is invisible.
  const auto late = std::make_unique<PgConnection>(env.dsn("source"), "late");
  late->exec("begin");
  late->exec("select now()");
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));  // past the margin, so the clock alone would pass it
  testing::TableRuns runs(env, env.config(events_pipeline("updated_at")));
  const JobEnded r = runs.run("app", "events");
  CHECK(r.summary.status == RunStatus::Failed);
  CHECK(r.summary.error.find("pg_monitor") != std::string::npos);
  ValidateOptions cl;
  cl.config_path = env.write_config_files(events_pipeline("updated_at"));
  std::ostringstream out, err;
  CHECK(run_validate(cl, Instant{}, out, err) == 2);
  CHECK(err.str().find("pg_monitor") != std::string::npos);
  late->exec("rollback");
  admin.exec("drop owned by " + role + "; drop role " + role);
}

TEST_CASE("an initial in the future is refused; a stored watermark ahead is reported and never moved") {
  {
    EventsFixture f(kTimeEvents, "updated_at", "    initial: \"2062-01-01T00:00:00Z\"\n");
    const JobEnded r = f.run();
    CHECK(r.summary.status == RunStatus::Failed);
    CHECK(r.summary.error.find("ahead of the source's safe horizon") != std::string::npos);
    CHECK(f.watermark().empty());
  }
  EventsFixture f(kTimeEvents, "updated_at");
  f.env.source().exec("insert into events (id, updated_at) values (1, now() - interval '1 hour')");
  REQUIRE(f.run().summary.status == RunStatus::Success);
  f.env.state().exec("update tidemark.watermarks set value = '2062-01-01T00:00:00Z'");
  f.env.source().exec("insert into events (id, updated_at) values (2, now() - interval '1 minute')");
  const JobEnded r = f.run();
  CHECK(r.summary.status == RunStatus::Success);
  CHECK(r.summary.horizon.watermark_ahead);
  CHECK(r.summary.horizon.held_by.find("ahead") != std::string::npos);
  CHECK(f.watermark() == "2062-01-01T00:00:00Z");
  CHECK(PgTestEnv::rows(f.env.state(), "select watermark_ahead from tidemark.runs order by run_id desc limit 1")[0] ==
        "t");
  // status calls it ahead, and stale, so the stale alert fires.
  testing::CommandRunner status;
  status.config_path = f.env.write_config_files(events_pipeline("updated_at"));
  StatusOptions json;
  json.json = true;
  REQUIRE(status.run(run_status, json) == 0);
  const auto rows = nlohmann::json::parse(status.out.str());
  CHECK(rows[0]["ahead"] == true);
  CHECK(rows[0]["stale"] == true);
  CHECK(rows[0]["horizon"]["held_by"].get<std::string>().find("ahead") != std::string::npos);
}

TEST_CASE("regression: a writer with track_activities off was not seen, so its now() row fell below the watermark") {
  EventsFixture f(kTimeEvents, "updated_at");
  f.env.source().exec("insert into events (id, updated_at) values (1, now() - interval '1 minute')");
  // With track_activities off a session shows as 'disabled' in
  // pg_stat_activity, with no xact_start, whatever it is doing.
  const auto hidden = f.writer();
  hidden->exec("set application_name = 'quiet writer'; set track_activities = off");
  hidden->exec("begin");
  const std::string started = PgTestEnv::rows(*hidden, "select now()")[0];
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));  // past the margin, so the clock alone would pass it
  const JobEnded refused = f.run();
  CHECK(refused.summary.status == RunStatus::Failed);
  CHECK(refused.summary.error.find("track_activities") != std::string::npos);
  CHECK(refused.summary.error.find("quiet writer") != std::string::npos);
  const std::string watermark = f.watermark();
  CHECK((watermark.empty() || PgTestEnv::rows(f.env.source(), "select '" + watermark + "'::timestamptz <= '" +
                                                                  started + "'::timestamptz")[0] == "t"));
  hidden->exec("insert into events (id) values (2)");
  hidden->exec("commit");

  // A lookback covers what cannot be seen; the run says it relies on it.
  testing::TableRuns covered(f.env, f.env.config(events_pipeline("updated_at", "    lookback: 10m\n")));
  const JobEnded accepted = covered.run("app", "events");
  CHECK(accepted.summary.status == RunStatus::Success);
  CHECK(accepted.summary.horizon.held_by.find("track_activities") != std::string::npos);
  CHECK(f.target_rows() == f.source_rows());
}

TEST_CASE("regression: a procedure that commits stamped statement_timestamp() before its open transaction began") {
  EventsFixture f(kTimeEvents, "updated_at");
  f.env.source().exec("insert into events (id, updated_at) values (1, now() - interval '1 minute')");
  // Inside CALL, COMMIT starts a new transaction (a later xact_start), but
  // statement_timestamp() stays the CALL's start.
  f.env.source().exec(R"SQL(
    create procedure load_late() language plpgsql as $$
    begin
      perform pg_sleep(1.5);
      commit;
      insert into events (id, updated_at) values (2, statement_timestamp());
      perform pg_sleep(2.5);
    end $$)SQL");
  const auto caller = f.writer();
  const int caller_pid = caller->backend_pid();
  std::thread call([&] { caller->exec("call load_late()"); });
  // Row 2 written, not committed: the insert gave the procedure's second
  // transaction an xid (its first, which only slept, took none).
  CHECK(testing::eventually(std::chrono::seconds(10), [&] {
    return PgTestEnv::rows(f.env.source(), "select backend_xid is not null from pg_stat_activity where pid = " +
                                               std::to_string(caller_pid)) == std::vector<std::string>{"t"};
  }));
  const JobEnded during = f.run();
  call.join();
  CHECK(during.summary.status == RunStatus::Success);
  testing::wait_past_start_report_margin();
  REQUIRE(f.run().summary.status == RunStatus::Success);
  CHECK(f.target_rows() == f.source_rows());
  CHECK(f.target_rows().size() == 2);
}

TEST_CASE("regression: a table written by logical replication got rows stamped on the publisher, below the watermark") {
  EventsFixture f(kTimeEvents, "updated_at");
  f.env.source().exec("insert into events (id, updated_at) values (1, now() - interval '1 minute')");
  // A subscription's apply worker commits the publisher's rows, stamped
  // there when their transactions began, long before the subscriber sees
  // any transaction. The test server has no logical WAL to publish from,
  // so the subscription is created without connecting and its table is
  // entered the way ALTER SUBSCRIPTION ... REFRESH PUBLICATION would.
  f.env.source().exec(
      "create subscription tidemark_test_sub connection 'dbname=postgres' publication p"
      " with (connect = false, slot_name = none);"
      "insert into pg_subscription_rel (srsubid, srrelid, srsubstate, srsublsn)"
      " select oid, 'public.events'::regclass, 'r', null from pg_subscription where subname = 'tidemark_test_sub'");
  const JobEnded refused = f.run();
  CHECK(refused.summary.status == RunStatus::Failed);
  CHECK(refused.summary.error.find("tidemark_test_sub") != std::string::npos);
  CHECK(refused.summary.error.find("lookback") != std::string::npos);
  CHECK(f.watermark().empty());

  testing::TableRuns covered(f.env, f.env.config(events_pipeline("updated_at", "    lookback: 1h\n")));
  const JobEnded accepted = covered.run("app", "events");
  CHECK(accepted.summary.status == RunStatus::Success);
  CHECK(accepted.summary.horizon.held_by.find("tidemark_test_sub") != std::string::npos);
  f.env.source().exec("delete from pg_subscription_rel; drop subscription tidemark_test_sub");
}

TEST_CASE("regression: a timestamp hi in the first pass of a repeated hour claimed the rows stamped after clocks went back") {
  PgTestEnv env;
  // The source session's zone is the one `timestamp` and `date` hi are in.
  PgConnection berlin(env.dsn("source") + " options='-c TimeZone=Europe/Berlin'", "source");
  PgSource source(berlin);
  const auto wall = [&](const char* utc, CursorType type) {
    const auto instant = cursor_from_text(CursorType::TimestampTz, utc);
    REQUIRE(instant);
    const auto hi = source.cursor_at(instant->raw, type);
    REQUIRE(hi);
    return cursor_to_text(*hi);
  };
  // 2026-10-25: at 01:00 UTC Berlin's clocks go back from 03:00 CEST to
  // 02:00 CET. At 00:30 UTC the wall clock reads 02:30, yet a row stamped
  // now() at 01:10 UTC reads 02:10: a watermark at 02:30 claimed it.
  CHECK(wall("2026-10-25T00:30:00Z", CursorType::Timestamp) <= "2026-10-25T02:00:00");
  CHECK(wall("2026-10-25T00:30:00Z", CursorType::Timestamp) >= "2026-10-25T01:59:00");
  // Before the repeated hour, in its second pass and on ordinary days the
  // wall clock is hi as it is.
  CHECK(wall("2026-10-24T23:59:00Z", CursorType::Timestamp) == "2026-10-25T01:59:00");
  CHECK(wall("2026-10-25T01:30:00Z", CursorType::Timestamp) == "2026-10-25T02:30:00");
  CHECK(wall("2026-03-29T01:30:00Z", CursorType::Timestamp) == "2026-03-29T03:30:00");
  CHECK(wall("2026-07-01T12:00:00.25Z", CursorType::Timestamp) == "2026-07-01T14:00:00.25");
  CHECK(wall("2026-10-25T00:30:00Z", CursorType::Date) == "2026-10-25");
  CHECK(wall("2026-07-01T22:30:00Z", CursorType::Date) == "2026-07-02");
}

TEST_CASE("rows whose cursor is NULL are counted, since no window includes them") {
  EventsFixture f("(id bigint primary key, updated_at timestamptz)", "updated_at");
  f.env.source().exec("insert into events values (1, now() - interval '1 hour'), (2, null), (3, null)");
  const JobEnded r = f.run();
  REQUIRE(r.summary.status == RunStatus::Success);
  CHECK(r.summary.rows_read == 1);
  REQUIRE(r.summary.horizon.null_cursor_rows);
  CHECK(*r.summary.horizon.null_cursor_rows == 2);
  CHECK(PgTestEnv::rows(f.env.state(), "select null_cursor_rows from tidemark.runs order by run_id desc limit 1")[0] ==
        "2");
}

TEST_CASE("a look at a NOT NULL cursor counts no NULLs, only infinities; a view over it still counts both") {
  PgTestEnv env;
  env.source().exec(
      "create table public.stamped (id bigint primary key, at timestamptz not null, n bigint not null);"
      "insert into stamped values (1, now(), 1), (2, 'infinity', 2), (3, '-infinity', 3);"
      "create view public.stamped_view as select * from public.stamped;"
      "create table public.loose (id bigint primary key, at timestamptz);"
      "insert into loose values (1, now()), (2, null), (3, 'infinity')");
  PgSource source(env.source());
  const auto look = [&](const char* relation, const char* cursor) {
    TableConfig t;
    t.source_table = *QualifiedName::parse(relation);
    t.cursor = cursor;
    const auto inspected = source.inspect(t);
    REQUIRE(inspected);
    const auto probe = source.probe(t, *inspected, std::nullopt);
    REQUIRE(probe);
    return std::make_tuple(inspected->cursor_never_null, probe->null_cursor_rows, probe->infinite_cursor_rows);
  };
  CHECK(look("public.stamped", "at") == std::make_tuple(true, std::int64_t{0}, std::int64_t{2}));
  CHECK(look("public.stamped", "n") == std::make_tuple(true, std::int64_t{0}, std::int64_t{0}));
  CHECK(look("public.stamped_view", "at") == std::make_tuple(false, std::int64_t{0}, std::int64_t{2}));
  CHECK(look("public.loose", "at") == std::make_tuple(false, std::int64_t{1}, std::int64_t{1}));
  // Once the constraint goes, so does the shortcut (a new session: the
  // catalog read again).
  env.source().exec("alter table public.stamped alter column at drop not null; insert into stamped values (4, null, 4)");
  PgSource again(env.source());
  TableConfig t;
  t.source_table = *QualifiedName::parse("public.stamped");
  t.cursor = "at";
  const auto inspected = again.inspect(t);
  REQUIRE(inspected);
  CHECK_FALSE(inspected->cursor_never_null);
  const auto probe = again.probe(t, *inspected, std::nullopt);
  REQUIRE(probe);
  CHECK(probe->null_cursor_rows == 1);
}

TEST_CASE("source sessions are read-only: a partition query with a writable CTE cannot delete source rows") {
  PgTestEnv env;
  env.source().exec("create table public.orders (id int primary key, ordered_at timestamptz not null);"
                    "insert into orders select g, now() - g * interval '1 hour' from generate_series(1, 50) g");
  env.target().exec("create table public.daily (day timestamptz not null, orders bigint)");
  testing::TableRuns runs(env, env.config(R"(pipeline: app
source: source
target: target
schedule: "@daily"
tables:
  - name: daily
    mode: partition
    partition: { column: day, unit: day }
    target_table: public.daily
    initial: "2026-01-01"
    query: |
      with gone as (delete from orders returning 1)
      select date_trunc('day', ordered_at) as day, count(*) as orders from orders
      where ordered_at >= $1 and ordered_at < $2 group by 1
)"));
  const JobEnded r = runs.run("app", "daily");
  CHECK(r.summary.status == RunStatus::Failed);
  CHECK(PgTestEnv::rows(env.source(), "select count(*) from orders")[0] == "50");

  // Whatever a query is wrapped in, the session itself refuses to write.
  const auto config = env.config(events_pipeline("updated_at"));
  PipelineConnections connections;
  connections.open_data(*config, config->pipelines.front());
  try {
    connections.source->exec("delete from orders");
    FAIL("a source session wrote");
  } catch (const PgError& e) {
    CHECK(std::string(e.what()).find("read-only transaction") != std::string::npos);
  }
  CHECK(PgTestEnv::rows(*connections.source, "select application_name from pg_stat_activity where pid = "
                                             "pg_backend_pid()")[0] == kReadOnlySourceApplication);
  CHECK(PgTestEnv::rows(env.source(), "select count(*) from orders")[0] == "50");
}

}  // namespace tidemark

namespace tidemark {
namespace {

// The database `name` on the hot standby that scripts/test starts beside
// the test server (scripts/lib/common.sh start_standby): a replica of a
// primary of its own, where the standby's cases make their databases
// (PgTestEnv on TestServer::StandbyPrimary).
std::string standby_dsn(const std::string& database) {
  const char* host = std::getenv("TIDEMARK_STANDBY_HOST");
  const char* port = std::getenv("TIDEMARK_STANDBY_PORT");
  REQUIRE_MESSAGE(host != nullptr, "scripts/test starts a hot standby and sets TIDEMARK_STANDBY_HOST");
  std::string dsn = "host=" + std::string(host) + " dbname=" + database + " user=postgres";
  if (port != nullptr) dsn += " port=" + std::string(port);
  return dsn;
}

// A session on the standby once it has replayed the events table of the
// database `dsn` names.
std::unique_ptr<PgConnection> await_standby(const std::string& dsn) {
  // Up to 30 s: beside a compiling build, replay of a new database can lag.
  for (int i = 0; i < 300; ++i) {
    try {
      auto standby = std::make_unique<PgConnection>(dsn, "standby");
      PgTestEnv::rows(*standby, "select count(*) from events");
      return standby;
    } catch (const PgError&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  FAIL("the standby did not replay the events table");
  return nullptr;
}

// The events table on the test's source, and the connection "replica" to
// it on the standby, reading its horizon on the source. Returns the
// standby's DSN.
std::string events_on_replica_of_source(PgTestEnv& env) {
  env.source().exec(std::string("create table public.events ") + kTimeEvents);
  const std::string replica = standby_dsn(PgTestEnv::rows(env.source(), "select current_database()")[0]);
  env.add_connection("replica", "dsn: \"" + replica + "\", primary: source, replay_timeout: 5s");
  return replica;
}

std::string replica_pipeline(const std::string& extra = "") {
  return "pipeline: app\nsource: replica\ntarget: target\nschedule: \"* * * * *\"\ntables:\n"
         "  - name: events\n    source_table: public.events\n    target_table: public.events\n"
         "    key: [id]\n    cursor: updated_at\n" +
         extra;
}

}  // namespace

TEST_CASE("a hot-standby source: refused without its primary, read through it with one, waiting for replay") {
  PgTestEnv env(true, testing::TestServer::StandbyPrimary);
  env.source().exec(std::string("create table public.events ") + kTimeEvents +
                    "; insert into events (id, updated_at) values (1, now() - interval '1 hour')");
  env.target().exec(std::string("create table public.events ") + kTimeEvents);
  const std::string database = PgTestEnv::rows(env.source(), "select current_database()")[0];
  const std::string replica = standby_dsn(database);
  // The standby has the database and the row once it has replayed them.
  std::unique_ptr<PgConnection> standby;
  for (int i = 0; i < 300 && !standby; ++i) {
    try {
      standby = std::make_unique<PgConnection>(replica, "standby");
      if (PgTestEnv::rows(*standby, "select count(*) from events")[0] != "1") standby.reset();
    } catch (const PgError&) {
      standby.reset();
    }
    if (!standby) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  REQUIRE(standby);
  REQUIRE(PgTestEnv::rows(*standby, "select pg_is_in_recovery()")[0] == "t");

  {
    env.add_connection("replica", "dsn: \"" + replica + "\"");
    testing::TableRuns runs(env, env.config(replica_pipeline()));
    const JobEnded refused = runs.run("app", "events");
    CHECK(refused.summary.status == RunStatus::Failed);
    CHECK(refused.summary.error.find("hot standby") != std::string::npos);
    CHECK(refused.summary.error.find("primary:") != std::string::npos);
    ValidateOptions cl;
    cl.config_path = env.write_config_files(replica_pipeline());
    std::ostringstream out, err;
    CHECK(run_validate(cl, Instant{}, out, err) == 2);
    CHECK(err.str().find("hot standby") != std::string::npos);
    // A lookback covers what the standby cannot see.
    testing::TableRuns covered(env, env.config(replica_pipeline("    lookback: 10m\n")));
    const JobEnded accepted = covered.run("app", "events");
    CHECK(accepted.summary.status == RunStatus::Success);
    CHECK(accepted.summary.horizon.held_by.find("standby") != std::string::npos);
  }

  PgTestEnv with_primary(true, testing::TestServer::StandbyPrimary);
  with_primary.source().exec(std::string("create table public.events ") + kTimeEvents +
                             "; insert into events (id, updated_at) values (1, now() - interval '1 hour')");
  with_primary.target().exec(std::string("create table public.events ") + kTimeEvents);
  const std::string replica2 =
      standby_dsn(PgTestEnv::rows(with_primary.source(), "select current_database()")[0]);
  with_primary.add_connection("replica", "dsn: \"" + replica2 + "\", primary: source, replay_timeout: 5s");
  // The run waits for replay of what it reads, but it cannot connect to a
  // database the standby has not created yet.
  await_standby(replica2);
  testing::TableRuns runs(with_primary, with_primary.config(replica_pipeline()));

  // A transaction open on the primary holds hi back, though the standby cannot see it.
  const auto late = std::make_unique<PgConnection>(with_primary.dsn("source"), "late");
  late->exec("begin");
  const std::string started = PgTestEnv::rows(*late, "select now()")[0];
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));  // past the margin, so the clock alone would pass it
  const JobEnded held = runs.run("app", "events");
  REQUIRE(held.summary.status == RunStatus::Success);
  CHECK(held.summary.rows_read == 1);
  CHECK(PgTestEnv::rows(with_primary.source(), "select '" + cursor_to_text(*held.summary.watermark_after) +
                                                   "'::timestamptz <= '" + started + "'::timestamptz")[0] == "t");
  late->exec("insert into events (id) values (2)");
  late->exec("commit");

  // The standby stops replaying: the run waits for it, then gives up
  // before reading rows it does not have yet.
  PgConnection standby2(replica2, "standby");
  standby2.exec("select pg_wal_replay_pause()");
  with_primary.source().exec("insert into events (id) values (3)");
  testing::wait_past_start_report_margin();
  const JobEnded lagging = runs.run("app", "events");
  CHECK(lagging.summary.status == RunStatus::Failed);
  CHECK(lagging.summary.error.find("has not replayed") != std::string::npos);
  standby2.exec("select pg_wal_replay_resume()");
  // Let the standby catch up first: on a loaded machine (the other tests
  // write WAL too) replay can take longer than the run's timeout.
  const std::string flushed = PgTestEnv::rows(with_primary.source(), "select pg_current_wal_flush_lsn()")[0];
  for (int i = 0; i < 300; ++i) {
    if (PgTestEnv::rows(standby2, "select pg_last_wal_replay_lsn() >= '" + flushed + "'::pg_lsn")[0] == "t") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const JobEnded caught_up = runs.run("app", "events");
  CHECK(caught_up.summary.status == RunStatus::Success);
  CHECK(PgTestEnv::rows(with_primary.target(), "select id from events order by id") ==
        std::vector<std::string>{"1", "2", "3"});
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("regression: an asynchronous commit on the primary was visible there but not yet on the standby") {
  PgTestEnv env(true, testing::TestServer::StandbyPrimary);
  const std::string replica = events_on_replica_of_source(env);
  const auto config = env.config(replica_pipeline());
  const auto standby = await_standby(replica);
  PipelineConnections connections;
  connections.open_data(*config, config->pipelines.front());
  PgSource source = connections.make_source();
  const TableConfig& table = config->pipelines.front().tables.front();

  // Committed on the primary before the horizon is read, so the horizon
  // takes it as done: the standby must show it once read_horizon returns.
  // An asynchronous commit is visible before its WAL is written, and the
  // position read used to be pg_current_wal_lsn(): 19 of 20 were missing.
  const auto writer = std::make_unique<PgConnection>(env.dsn("source"), "writer");
  writer->exec("set synchronous_commit = off");
  int missing = 0;
  for (int id = 1; id <= 20; ++id) {
    writer->exec("insert into events (id) values (" + std::to_string(id) + ")");
    REQUIRE(source.read_horizon(table, CursorType::TimestampTz, std::nullopt));
    if (PgTestEnv::rows(*standby, "select count(*) from events where id = " + std::to_string(id))[0] != "1") ++missing;
  }
  CHECK(missing == 0);
}

TEST_CASE("regression: a primary: that names another database read that database's open transactions") {
  PgTestEnv env(true, testing::TestServer::StandbyPrimary);
  env.source().exec(std::string("create table public.events ") + kTimeEvents +
                    "; insert into events (id, updated_at) values (1, now() - interval '1 hour')");
  env.target().exec(std::string("create table public.events ") + kTimeEvents);
  const std::string source_db = PgTestEnv::rows(env.source(), "select current_database()")[0];
  const std::string target_db = PgTestEnv::rows(env.target(), "select current_database()")[0];
  const std::string replica = standby_dsn(source_db);
  await_standby(replica);
  // The right server, the wrong database: its sessions are not the writers.
  env.add_connection("replica", "dsn: \"" + replica + "\", primary: target, replay_timeout: 5s");
  testing::TableRuns runs(env, env.config(replica_pipeline()));
  const auto late = std::make_unique<PgConnection>(env.dsn("source"), "late");
  late->exec("begin");
  const std::string started = PgTestEnv::rows(*late, "select now()")[0];
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));  // past the margin, so the clock alone would pass it
  const JobEnded r = runs.run("app", "events");
  CHECK(r.summary.status == RunStatus::Failed);
  CHECK(r.summary.error.find(source_db) != std::string::npos);
  CHECK(r.summary.error.find(target_db) != std::string::npos);
  CHECK_FALSE(r.summary.watermark_after);
  late->exec("rollback");
}

TEST_CASE("regression: validate checked a standby's own role, not its primary:, where the horizon is read") {
  PgTestEnv env(true, testing::TestServer::StandbyPrimary);
  env.source().exec(std::string("create table public.events ") + kTimeEvents);
  env.target().exec(std::string("create table public.events ") + kTimeEvents);
  const std::string source_db = PgTestEnv::rows(env.source(), "select current_database()")[0];
  const std::string target_db = PgTestEnv::rows(env.target(), "select current_database()")[0];
  const std::string replica = standby_dsn(source_db);
  await_standby(replica);
  const std::string role = "tidemark_primary_" + std::to_string(::getpid());
  env.source().exec("drop role if exists " + role + "; create role " + role + " login");
  env.add_connection("plain_primary", "dsn: \"" + env.dsn("source") + " user=" + role + "\"");
  env.add_connection("via_plain", "dsn: \"" + replica + "\", primary: plain_primary");
  env.add_connection("via_target", "dsn: \"" + replica + "\", primary: target");
  env.add_connection("via_source", "dsn: \"" + replica + "\", primary: source");
  const auto validate = [&](const std::string& connection, std::string& out, std::string& err) {
    std::string pipeline = replica_pipeline();
    pipeline.replace(pipeline.find("source: replica"), std::string("source: replica").size(), "source: " + connection);
    ValidateOptions cl;
    cl.config_path = env.write_config_files(pipeline);
    std::ostringstream o, e;
    const int code = run_validate(cl, Instant{}, o, e);
    out = o.str();
    err = e.str();
    return code;
  };
  std::string out, err;
  // The standby's own role is a superuser; the primary's, where runs read
  // the horizon, cannot see other sessions.
  CHECK(validate("via_plain", out, err) == 2);
  CHECK(err.find("pg_monitor") != std::string::npos);
  CHECK(err.find("plain_primary") != std::string::npos);
  // The primary: is another database: every run of the source fails.
  CHECK(validate("via_target", out, err) == 2);
  CHECK(err.find(target_db) != std::string::npos);
  CHECK(err.find(source_db) != std::string::npos);
  CHECK(validate("via_source", out, err) == 0);
  CHECK(out.find("source via_source: hot standby; horizon read on source") != std::string::npos);
  env.source().exec("drop role " + role);
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("regression: a standby's horizon reading was to be shared by runs whose sessions may reach another standby") {
  // A standby's reading is safe only once the session's own server has
  // replayed up to it; a host name may lead another run's session to a
  // standby further behind. Only a primary's reading is shared.
  PgTestEnv env(true, testing::TestServer::StandbyPrimary);
  const std::string replica = events_on_replica_of_source(env);
  env.add_connection("lone_replica", "dsn: \"" + replica + "\"");
  const auto config = env.config(replica_pipeline());
  await_standby(replica);
  const TableConfig& table = config->pipelines.front().tables.front();
  const auto kept_after_a_read = [&](const std::string& connection) {
    SharedReads shared;
    PipelineConnections connections(nullptr, &shared);
    PipelineConfig pipeline = config->pipelines.front();
    pipeline.source = connection;
    connections.open_data(*config, pipeline);
    PgSource source = connections.make_source();
    REQUIRE(source.read_horizon(table, CursorType::TimestampTz, std::numeric_limits<SourceMicros>::min()));
    return shared.moments.recent(connections.source->endpoint(), std::numeric_limits<SourceMicros>::min())
        .has_value();
  };
  CHECK_FALSE(kept_after_a_read("replica"));       // read on the primary, waited for on this standby
  CHECK_FALSE(kept_after_a_read("lone_replica"));  // a standby without a primary
  CHECK(kept_after_a_read("source"));              // the primary itself
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("a snapshot read from a hot standby looks first at the rows replayed since its last snapshot") {
  PgTestEnv env(true, testing::TestServer::StandbyPrimary);
  env.source().exec("create table public.events (id int primary key, v int);"
                    " insert into public.events select g, g from generate_series(1, 3000) g");
  env.target().exec("create table public.events (id int primary key, v int)");
  const std::string replica = standby_dsn(PgTestEnv::rows(env.source(), "select current_database()")[0]);
  const std::unique_ptr<PgConnection> standby = await_standby(replica);
  env.add_connection("replica", "dsn: \"" + replica + "\"");
  testing::TableRuns runs(env, env.config("pipeline: app\nsource: replica\ntarget: target\nschedule: \"* * * * *\"\n"
                                          "tables:\n  - name: events\n    mode: snapshot\n"
                                          "    source_table: public.events\n    target_table: public.events\n"
                                          "    key: [id]\n"));
  REQUIRE(runs.run("app", "events").summary.status == RunStatus::Success);
  REQUIRE(runs.run("app", "events").summary.snapshot_path == "unchanged");
  env.source().exec("update public.events set v = -v where id % 300 = 0; insert into public.events values (5000, 5)");
  bool replayed = false;
  for (int i = 0; i < 300 && !replayed; ++i) {
    replayed = PgTestEnv::rows(*standby, "select count(*) from public.events where v < 0 or id = 5000")[0] == "11";
    if (!replayed) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  REQUIRE(replayed);
  const JobEnded r = runs.run("app", "events");
  REQUIRE_MESSAGE(r.summary.status == RunStatus::Success, r.summary.error);
  CHECK(r.summary.snapshot_path == "diff of the rows written since the last snapshot: 10 changed, 1 missing, 0 gone");
  CHECK(PgTestEnv::rows(env.target(), "select count(*), sum(v) from public.events") ==
        PgTestEnv::rows(env.source(), "select count(*), sum(v) from public.events"));
}

}  // namespace tidemark
