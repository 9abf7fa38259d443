// A table rewrite or TRUNCATE committed while a run waits to read the
// table: the read used to take its snapshot before waiting for the lock,
// saw the table's new storage as empty, read nothing, and moved the
// watermark past rows it never read (kept stale in the target for good).
// Each operation that gives a table new storage runs while a run waits
// behind it; the target must end equal to the source.
#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <thread>

#include "core/watermark/safe_horizon.h"
#include "daemon/pg/data/pg_source.h"
#include "daemon/pg/data/pg_unit_of_work.h"
#include "daemon/pg/libpq/source_session.h"
#include "pg_test_env.h"

namespace tidemark {
namespace {

using testing::PgTestEnv;

const char* const kTable =
    "(id int primary key, v int, note text, updated_at timestamptz not null default now())";

std::string pipeline(const std::string& source_table, const std::string& extra = "") {
  return "pipeline: p\nsource: source\ntarget: target\nschedule: \"* * * * *\"\ntables:\n"
         "  - name: t\n    source_table: " + source_table + "\n    target_table: public.t\n"
         "    key: [id]\n    cursor: updated_at\n" + extra;
}

// Waits until `pid` (or, with pid 0, a tidemark source session) waits for
// a lock in the source database; false when none does within 20 s.
bool waits_for_lock(PgConnection& observer, int pid) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    const auto waiting = PgTestEnv::rows(
        observer, "select count(*) from pg_stat_activity where datname = current_database()"
                  " and wait_event_type = 'Lock' and " +
                      (pid != 0 ? "pid = " + std::to_string(pid)
                                : std::string("application_name = '") + kReadOnlySourceApplication + "'"));
    if (waiting[0] != "0") return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

struct Rewrite {
  PgTestEnv env;
  testing::TableRuns runs;

  explicit Rewrite(const std::string& source_sql, const std::string& source_table = "public.t",
                   const std::string& extra = "")
      : runs(prepared(env, source_sql), env.config(pipeline(source_table, extra))) {}

  static PgTestEnv& prepared(PgTestEnv& env, const std::string& source_sql) {
    env.source().exec(source_sql);
    env.target().exec(std::string("create table public.t ") + kTable);
    return env;
  }

  JobEnded run() { return runs.run("p", "t"); }

  // Changes rows 1-5 of `changed`, then starts a run; just before the run
  // reads its first chunk, `operation` (one statement) starts on another session, held up
  // by a third that reads `held` (VACUUM FULL cannot wait inside a
  // transaction of its own), and the run's read queues behind it. Once the
  // read waits, the operation goes ahead and commits. Returns the run's
  // summary.
  JobEnded run_behind(const std::string& operation, const std::string& changed = "public.t",
                          const std::string& held = "public.t") {
    env.source().exec("update " + changed + " set v = v + 1000, note = 'changed', updated_at = now() where id <= 5");
    // Rows stamped within kStartReportMargin of the source's clock wait for a later run.
    std::this_thread::sleep_for(std::chrono::microseconds(kStartReportMargin) + std::chrono::milliseconds(50));
    PgConnection blocker(env.dsn("source"), "blocker");
    PgConnection operation_session(env.dsn("source"), "operation");
    std::promise<bool> queued;
    bool first = true;
    auto running = std::async(std::launch::async, [&] {
      return runs.run("p", "t", RunTrigger::Manual, [&](ChunkStep step) {
        if (step != ChunkStep::BeforeTargetWrite || !first) return;
        first = false;
        PgConnection observer(env.dsn("source"), "observer");
        blocker.exec("begin; select count(*) from " + held);
        operation_session.send(operation, {});
        queued.set_value(waits_for_lock(observer, operation_session.backend_pid()));
      });
    });
    // A run that reads no chunk never calls the hook: fail, not hang.
    auto queued_future = queued.get_future();
    REQUIRE(queued_future.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
    REQUIRE(queued_future.get());
    PgConnection observer(env.dsn("source"), "observer");
    CHECK(waits_for_lock(observer, 0));
    blocker.exec("commit");
    operation_session.finish();
    return running.get();
  }

  // As run_behind, but `operation` queues before the run starts, so that
  // the run's first look at its range (Source::probe) waits behind it:
  // for a relation whose rows change only with the operation (a
  // materialized view), where that look is the read that must not find
  // the new storage empty.
  JobEnded run_behind_first_look(const std::string& operation, const std::string& changed,
                                     const std::string& held) {
    env.source().exec("update " + changed + " set v = v + 1000, note = 'changed', updated_at = now() where id <= 5");
    std::this_thread::sleep_for(std::chrono::microseconds(kStartReportMargin) + std::chrono::milliseconds(50));
    PgConnection blocker(env.dsn("source"), "blocker");
    PgConnection operation_session(env.dsn("source"), "operation");
    PgConnection observer(env.dsn("source"), "observer");
    blocker.exec("begin; select count(*) from " + held);
    operation_session.send(operation, {});
    REQUIRE(waits_for_lock(observer, operation_session.backend_pid()));
    auto running = std::async(std::launch::async, [&] { return runs.run("p", "t"); });
    CHECK(waits_for_lock(observer, 0));  // the run's look, behind the operation
    blocker.exec("commit");
    operation_session.finish();
    return running.get();
  }

  std::vector<std::string> source_rows(const std::string& table = "public.t") {
    return PgTestEnv::rows(env.source(), "select id, v, note, updated_at from " + table + " order by id");
  }
  std::vector<std::string> target_rows() {
    return PgTestEnv::rows(env.target(), "select id, v, note, updated_at from public.t order by id");
  }
};

const char* const kRewriteRows =
    "insert into public.t (id, v, note, updated_at) select g, g, 'first', now() - interval '1 hour'"
    " from generate_series(1, 100) g";

}  // namespace

TEST_CASE("regression: a table rewrite or TRUNCATE during a run no longer skips the rows it held") {
  struct Case {
    const char* what;
    const char* operation;
  };
  const Case cases[] = {
      {"TRUNCATE and INSERT in one transaction",
       "do $$ begin create temp table keep as select * from public.t; truncate public.t;"
       " insert into public.t select * from keep; end $$"},
      {"ALTER COLUMN TYPE to the same type, USING (a rewrite)",
       "alter table public.t alter column v type int using v + 0"},
      {"ADD COLUMN with a volatile default", "alter table public.t add column u uuid default gen_random_uuid()"},
      {"VACUUM FULL", "vacuum full public.t"},
      {"CLUSTER", "cluster public.t using t_pkey"},
      {"SET UNLOGGED", "alter table public.t set unlogged"},
  };
  for (const Case& c : cases) {
    CAPTURE(std::string(c.what));
    Rewrite r(std::string("create table public.t ") + kTable + ";" + kRewriteRows, "public.t",
              "    on_schema_change: append_new_columns\n");
    REQUIRE(r.run().summary.status == RunStatus::Success);
    const JobEnded behind = r.run_behind(c.operation);
    INFO(behind.summary.error);
    CHECK(behind.summary.status == RunStatus::Success);
    // It read the table as the operation left it: the five rows changed.
    CHECK(behind.summary.rows_read == 5);
    CHECK(r.target_rows() == r.source_rows());
  }
}

TEST_CASE("a range truncated and refilled while the run's first look at it waits is seen refilled, not empty") {
  // The look that decides whether a range holds rows at all comes before
  // any chunk: were its snapshot taken before it waited, it would find
  // the new storage empty and move the watermark past the changed rows.
  Rewrite r(std::string("create table public.t ") + kTable + ";" + kRewriteRows);
  REQUIRE(r.run().summary.status == RunStatus::Success);
  r.env.source().exec("update public.t set v = v + 1000, note = 'changed', updated_at = now() where id <= 5");
  std::this_thread::sleep_for(std::chrono::microseconds(kStartReportMargin) + std::chrono::milliseconds(50));
  PgConnection operation(r.env.dsn("source"), "operation");
  operation.exec("begin; create temp table keep as select * from public.t; truncate public.t;"
                 " insert into public.t select * from keep");
  auto running = std::async(std::launch::async, [&] { return r.run(); });
  PgConnection observer(r.env.dsn("source"), "observer");
  REQUIRE(waits_for_lock(observer, 0));  // the run's look waits behind the TRUNCATE
  operation.exec("commit");
  const JobEnded behind = running.get();
  INFO(behind.summary.error);
  CHECK(behind.summary.status == RunStatus::Success);
  CHECK(behind.summary.rows_read == 5);
  CHECK(r.target_rows() == r.source_rows());
}

TEST_CASE("regression: a column retyped while a run waits fails the chunk instead of loading it as the old type") {
  // int to bigint, read in binary into an int target: the rows would be
  // read as another type than the plan (and the COPY format) meant.
  Rewrite r(std::string("create table public.t ") + kTable + ";" + kRewriteRows);
  REQUIRE(r.run().summary.status == RunStatus::Success);
  const std::string watermark =
      PgTestEnv::rows(r.env.state(), "select value from tidemark.watermarks where pipeline = 'p'")[0];
  const JobEnded behind = r.run_behind("alter table public.t alter column v type bigint");
  CHECK(behind.summary.status == RunStatus::Failed);
  CHECK(behind.summary.error_kind == ErrorKind::Transient);
  CHECK(behind.summary.error.find("changed while the chunk read it (v integer -> bigint)") != std::string::npos);
  CHECK(PgTestEnv::rows(r.env.state(), "select value from tidemark.watermarks where pipeline = 'p'")[0] ==
        watermark);
  // The next run names the drift; once the target is widened too, the rows land.
  const JobEnded next = r.run();
  CHECK(next.summary.status == RunStatus::Failed);
  CHECK(next.summary.error.find("retyped v integer -> bigint") != std::string::npos);
  r.env.target().exec("alter table public.t alter column v type bigint");
  REQUIRE(r.run().summary.status == RunStatus::Success);
  CHECK(r.target_rows() == r.source_rows());
}

TEST_CASE("regression: a partition truncated and refilled during a run of its parent is read as refilled") {
  Rewrite r("create table public.t (id int, v int, note text, updated_at timestamptz not null default now(),"
            " primary key (id)) partition by range (id);"
            "create table public.t_low partition of public.t for values from (minvalue) to (50);"
            "create table public.t_high partition of public.t for values from (50) to (maxvalue);" +
            std::string(kRewriteRows));
  REQUIRE(r.run().summary.status == RunStatus::Success);
  const JobEnded behind = r.run_behind(
      "do $$ begin create temp table keep as select * from public.t_low; truncate public.t_low;"
      " insert into public.t_low select * from keep; end $$",
      "public.t_low", "public.t_low");
  INFO(behind.summary.error);
  CHECK(behind.summary.status == RunStatus::Success);
  CHECK(behind.summary.rows_read == 5);
  CHECK(r.target_rows() == r.source_rows());
}

TEST_CASE("regression: a view's table rewritten during a run is read as rewritten") {
  Rewrite r(std::string("create table public.base ") + kTable + ";" +
                "insert into public.base (id, v, note, updated_at) select g, g, 'first', now() - interval '1 hour'"
                " from generate_series(1, 100) g;"
                "create view public.t_view as select * from public.base",
            "public.t_view");
  REQUIRE(r.run().summary.status == RunStatus::Success);
  const JobEnded behind = r.run_behind(
      "do $$ begin create temp table keep as select * from public.base; truncate public.base;"
      " insert into public.base select * from keep; end $$",
      "public.base", "public.base");
  INFO(behind.summary.error);
  CHECK(behind.summary.status == RunStatus::Success);
  CHECK(behind.summary.rows_read == 5);
  CHECK(r.target_rows() == r.source_rows("public.base"));
}

TEST_CASE("regression: a materialized view refreshed during a run is read as refreshed") {
  Rewrite r(std::string("create table public.base ") + kTable + ";" +
                "insert into public.base (id, v, note, updated_at) select g, g, 'first', now() - interval '1 hour'"
                " from generate_series(1, 100) g;"
                "create materialized view public.t_mat as select * from public.base;"
                "create unique index on public.t_mat (id)",
            "public.t_mat");
  REQUIRE(r.run().summary.status == RunStatus::Success);
  // The base changes; the refresh that shows it runs while the run waits.
  const JobEnded behind =
      r.run_behind_first_look("refresh materialized view public.t_mat", "public.base", "public.t_mat");
  INFO(behind.summary.error);
  CHECK(behind.summary.status == RunStatus::Success);
  CHECK(behind.summary.rows_read == 5);
  CHECK(r.target_rows() == r.source_rows("public.t_mat"));
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("a table truncated and refilled while a partition's query waits for it is read as refilled") {
  // A partition's query is a plain SELECT, whose snapshot PostgreSQL takes
  // after its locks in read committed (which every session is pinned to):
  // the partition holds the refilled rows, not none.
  PgTestEnv env;
  env.source().exec(std::string("create table public.t ") + kTable +
                    "; insert into public.t (id, v, note, updated_at) select g, g, 'first',"
                    " date_trunc('day', now() at time zone 'UTC') at time zone 'UTC' - interval '12 hours'"
                    " from generate_series(1, 100) g");
  env.target().exec("create table public.daily (day date not null, n bigint not null)");
  testing::TableRuns runs(env, env.config(R"(pipeline: p
source: source
target: target
schedule: "5 0 * * *"
tables:
  - name: daily
    mode: partition
    partition: { column: day, unit: day }
    query: select $1::date as day, count(*) as n from public.t where updated_at >= $1 and updated_at < $2
    target_table: public.daily
)"));
  PgConnection blocker(env.dsn("source"), "blocker");
  PgConnection operation(env.dsn("source"), "operation");
  std::promise<bool> queued;
  auto running = std::async(std::launch::async, [&] {
    return runs.run("p", "daily", RunTrigger::Manual, [&](ChunkStep step) {
      if (step != ChunkStep::BeforeTargetWrite) return;
      PgConnection observer(env.dsn("source"), "observer");
      blocker.exec("begin; select count(*) from public.t");
      operation.send("do $$ begin create temp table keep as select * from public.t; truncate public.t;"
                     " insert into public.t select * from keep; end $$",
                     {});
      queued.set_value(waits_for_lock(observer, operation.backend_pid()));
    });
  });
  REQUIRE(queued.get_future().get());
  CHECK(waits_for_lock(env.source(), 0));
  blocker.exec("commit");
  operation.finish();
  const JobEnded r = running.get();
  INFO(r.summary.error);
  REQUIRE(r.summary.status == RunStatus::Success);
  CHECK(PgTestEnv::rows(env.target(), "select n from public.daily") == std::vector<std::string>{"100"});
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("regression: a source role granted the table's columns, not the table, could not take the read's lock") {
  // LOCK TABLE wants a grant on the whole table; the window's own query,
  // which takes the same lock, is served by a grant on its columns.
  PgTestEnv env;
  env.source().exec(std::string("create table public.t ") + kTable + ";" + kRewriteRows);
  env.target().exec(std::string("create table public.t ") + kTable);
  testing::SourceRole role(env, "columns");
  env.source().exec("grant select (id, v, note, updated_at) on public.t to " + role.name());
  testing::CommandRunner c;
  // The role cannot see other sessions either: a lookback keeps that from being the refusal.
  c.config_path = env.write_config_files(pipeline("public.t", "    lookback: 1m\n"));
  RunOptions run;
  run.pipeline = "p";
  REQUIRE(c.run(run_run, run) == 0);
  CHECK(PgTestEnv::rows(env.target(), "select count(*) from public.t")[0] == "100");
}

}  // namespace tidemark
