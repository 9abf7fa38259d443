// Sessions reused across runs: fewer sessions, nothing of one run left for
// the next, sessions killed in between replaced rather than reused, idle
// ones closed.
#include <doctest/doctest.h>

#include <thread>

#include "core/watermark/safe_horizon.h"
#include "daemon/pg/data/pipeline_connections.h"
#include "daemon/pg/libpq/connection_pool.h"
#include "daemon/pg/libpq/source_session.h"
#include "pg_test_env.h"

namespace tidemark {
namespace {

using testing::PgTestEnv;

const char* const kConnectionPoolPipeline = R"(pipeline: app
source: source
target: target
schedule: "* * * * *"
tables:
  - name: events
    source_table: public.events
    target_table: public.events
    key: [id]
    cursor: updated_at
)";

struct PoolFixture {
  PgTestEnv env;
  testing::TableRuns runs;

  static PgTestEnv& with_tables(PgTestEnv& env) {
    env.source().exec("create table public.events (id int primary key, updated_at timestamptz not null);"
                      "insert into events select g, now() - interval '1 hour' from generate_series(1, 10) g");
    env.target().exec("create table public.events (id int primary key, updated_at timestamptz not null)");
    return env;
  }
  PoolFixture() : runs(with_tables(env), env.config(kConnectionPoolPipeline)) {}

  JobEnded run() { return runs.run("app", "events"); }
  std::string count(PgConnection& on, const std::string& sql) { return PgTestEnv::rows(on, sql)[0]; }
};

}  // namespace

TEST_CASE("runs of a table reuse their sessions instead of opening new ones") {
  PoolFixture f;
  REQUIRE(f.run().summary.status == RunStatus::Success);
  const std::size_t after_first = f.runs.pool().opened();
  CHECK(after_first == 2);  // the state database (also the target) and the source
  for (int i = 0; i < 5; ++i) REQUIRE(f.run().summary.status == RunStatus::Success);
  CHECK(f.runs.pool().opened() == after_first);
  CHECK(f.runs.pool().idle() == 2);
  // The source session is still read-only after the reset between runs.
  const auto config = f.env.config(kConnectionPoolPipeline);
  PooledConnection source = f.runs.pool().acquire(*config, "source", SessionKind::Source);
  CHECK(f.count(*source, "show transaction_read_only") == "on");
  CHECK(f.count(*source, "select application_name from pg_stat_activity where pid = pg_backend_pid()") ==
        kReadOnlySourceApplication);
}

TEST_CASE("nothing a user said it changed is left on a reused session: locks, temp tables, settings") {
  PoolFixture f;
  const auto config = f.env.config(kConnectionPoolPipeline);
  ConnectionPool pool(2, std::chrono::seconds(60));
  int pid = 0;
  {
    PooledConnection s = pool.acquire(*config, "target", SessionKind::ReadWrite);
    pid = s->backend_pid();
    s->exec("select pg_advisory_lock(4242); create temp table leftover (x int); set statement_timeout = '1s'");
    s->mark_session_changed();
  }
  PooledConnection again = pool.acquire(*config, "target", SessionKind::ReadWrite);
  CHECK(again->backend_pid() == pid);  // the same session...
  CHECK(f.count(*again, "select count(*) from pg_locks where locktype = 'advisory' and pid = pg_backend_pid()") ==
        "0");  // ...without the lock,
  CHECK(f.count(*again, "select to_regclass('pg_temp.leftover') is null") == "t");  // the temp table,
  CHECK(f.count(*again, "show statement_timeout") == "0");                          // or the setting
}

TEST_CASE("a session whose user failed on it is reset before it serves another") {
  PoolFixture f;
  const auto config = f.env.config(kConnectionPoolPipeline);
  ConnectionPool pool(2, std::chrono::seconds(60));
  {
    PooledConnection s = pool.acquire(*config, "target", SessionKind::ReadWrite);
    s->exec("set statement_timeout = '1s'");
    CHECK_THROWS_AS(s->exec("select no_such_column from pg_class"), PgError);
    CHECK(s->needs_reset());
  }
  PooledConnection again = pool.acquire(*config, "target", SessionKind::ReadWrite);
  CHECK_FALSE(again->needs_reset());
  CHECK(f.count(*again, "show statement_timeout") == "0");
}

TEST_CASE("a session left as found is handed out as it is, its prepared statements kept") {
  PoolFixture f;
  const auto config = f.env.config(kConnectionPoolPipeline);
  ConnectionPool pool(2, std::chrono::seconds(60));
  const std::string statement = "select count(*) from pg_prepared_statements where $1::int = 1";
  {
    PooledConnection s = pool.acquire(*config, "target", SessionKind::ReadWrite);
    CHECK(s->exec_prepared(statement, {"1"}).text(0, 0) == "1");  // itself, prepared
  }
  PooledConnection again = pool.acquire(*config, "target", SessionKind::ReadWrite);
  CHECK(again->exec_prepared(statement, {"1"}).text(0, 0) == "1");  // still there, not prepared again
  CHECK(f.count(*again, "select count(*) from pg_prepared_statements") == "1");
}

TEST_CASE("regression: a partition run's time zone stayed on the pooled source session for the next run") {
  PoolFixture f;
  const auto config = f.env.config(kConnectionPoolPipeline);
  ConnectionPool pool(2, std::chrono::seconds(60));
  PipelineConfig pipeline = config->pipelines.at(0);
  pipeline.timezone = "Pacific/Chatham";
  const std::string own_zone = f.count(f.env.source(), "show timezone");
  REQUIRE(own_zone != pipeline.timezone);
  {
    PipelineConnections connections(&pool);
    connections.open_state(*config);
    connections.open_data(*config, pipeline);
    connections.use_pipeline_time_zone(pipeline);
    CHECK(f.count(*connections.source, "show timezone") == pipeline.timezone);
  }
  PooledConnection again = pool.acquire(*config, "source", SessionKind::Source);
  CHECK(f.count(*again, "show timezone") == own_zone);  // the database's own zone, as every run expects
}

TEST_CASE("regression: a target session kept the zone of an earlier pipeline's source when the next source named none") {
  PoolFixture f;
  PgConnection target(f.env.dsn("target"), "target");
  PgConnection source(f.env.dsn("source"), "source");
  const std::string own_zone = f.count(target, "show timezone");
  source.exec("set timezone to 'Pacific/Chatham'");
  target.adopt_time_zone(source);
  CHECK(f.count(target, "show timezone") == "Pacific/Chatham");
  // A source that reports the host's zone names none to adopt: the target
  // goes back to its own, not the last source's.
  source.exec("set timezone to 'localtime'");
  REQUIRE(source.reported("TimeZone") == "localtime");
  target.adopt_time_zone(source);
  CHECK(f.count(target, "show timezone") == own_zone);
}

TEST_CASE("a session left in a transaction, or whose lock could not be released, is closed, not pooled") {
  PoolFixture f;
  const auto config = f.env.config(kConnectionPoolPipeline);
  ConnectionPool pool(2, std::chrono::seconds(60));
  {
    PooledConnection s = pool.acquire(*config, "target", SessionKind::ReadWrite);
    s->exec("begin");
  }
  CHECK(pool.idle() == 0);
  {
    PooledConnection s = pool.acquire(*config, "target", SessionKind::ReadWrite);
    s->poison();
  }
  CHECK(pool.idle() == 0);
  CHECK(pool.opened() == 2);
}

TEST_CASE("sessions killed between runs (a database restart) are replaced, never reused") {
  PoolFixture f;
  REQUIRE(f.run().summary.status == RunStatus::Success);
  REQUIRE(f.runs.pool().idle() == 2);
  PgConnection admin(testing::test_dsn("postgres"), "admin");
  const std::string databases = "'" + f.count(f.env.source(), "select current_database()") + "', '" +
                                f.count(f.env.target(), "select current_database()") + "'";
  // Every tidemark session of this test's databases goes, as in a restart.
  const std::string pooled = "from pg_stat_activity where backend_type = 'client backend' and datname in (" +
                             databases + ") and pid not in (" + std::to_string(f.env.source().backend_pid()) + ", " +
                             std::to_string(f.env.target().backend_pid()) + ")";
  admin.exec("select pg_terminate_backend(pid) " + pooled);
  // The next run must meet them dead, not still on their way out.
  REQUIRE(testing::eventually(std::chrono::seconds(10),
                              [&] { return f.count(admin, "select count(*) " + pooled) == "0"; }));
  f.env.source().exec("insert into events values (11, now())");
  std::this_thread::sleep_for(std::chrono::microseconds(kStartReportMargin) + std::chrono::milliseconds(50));
  const JobEnded after = f.run();
  CHECK(after.summary.status == RunStatus::Success);
  CHECK(f.runs.pool().opened() == 4);  // two new sessions, none of the dead ones
  CHECK(f.count(f.env.target(), "select count(*) from events") == "11");
  CHECK(f.run().summary.status == RunStatus::Success);
  CHECK(f.runs.pool().opened() == 4);
}

TEST_CASE("idle sessions are closed after the idle timeout") {
  PoolFixture f;
  const auto config = f.env.config(kConnectionPoolPipeline);
  ConnectionPool pool(2, std::chrono::seconds(1));
  { PooledConnection s = pool.acquire(*config, "target", SessionKind::ReadWrite); }
  CHECK(pool.idle() == 1);
  for (int i = 0; i < 40 && pool.idle() > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(pool.idle() == 0);
}

TEST_CASE("at most max_idle sessions per connection wait in the pool") {
  PoolFixture f;
  const auto config = f.env.config(kConnectionPoolPipeline);
  ConnectionPool pool(2, std::chrono::seconds(60));
  {
    PooledConnection a = pool.acquire(*config, "target", SessionKind::ReadWrite);
    PooledConnection b = pool.acquire(*config, "target", SessionKind::ReadWrite);
    PooledConnection c = pool.acquire(*config, "target", SessionKind::ReadWrite);
    CHECK(pool.opened() == 3);
  }
  CHECK(pool.idle() == 2);
}

}  // namespace tidemark
