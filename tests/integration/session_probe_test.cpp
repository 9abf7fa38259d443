// probe_session against the throwaway PgBouncers that scripts/test starts
// (start_pgbouncer): a direct connection and session pooling keep the
// session, transaction and statement pooling do not, and what goes wrong
// when the state connection goes through transaction pooling anyway.

#include <doctest/doctest.h>
#include <libpq-fe.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "daemon/commands/commands.h"
#include "daemon/pg/libpq/session_probe.h"
#include "daemon/pg/state/pg_state_store.h"
#include "daemon/pg/state/state_schema.h"
#include "pg_test_env.h"

namespace tidemark::testing {
namespace {

using Clock = std::chrono::steady_clock;

std::string env_or_fail(const char* name) {
  const char* value = std::getenv(name);
  REQUIRE_MESSAGE(value != nullptr, "run through scripts/test, which starts PgBouncer (start_pgbouncer)");
  return value;
}

enum class Pooling { Session, Transaction };

// A DSN for `database` through one of the two PgBouncers.
std::string bouncer_dsn(Pooling pooling, const std::string& database) {
  const std::string port = env_or_fail(pooling == Pooling::Session ? "TIDEMARK_PGBOUNCER_SESSION_PORT"
                                                                    : "TIDEMARK_PGBOUNCER_TRANSACTION_PORT");
  return "host=" + env_or_fail("TIDEMARK_PGBOUNCER_HOST") + " port=" + port + " dbname=" + database + " user=postgres";
}

std::string database_of(PgConnection& connection) { return connection.exec("select current_database()").text(0, 0); }

struct Timed {
  SessionProbe probe;
  double milliseconds = 0;
};

Timed timed_probe(const std::string& dsn, const SessionProbeOptions& options = {}) {
  PgConnection state(dsn, "state");
  const auto start = Clock::now();
  Timed out{probe_session(state, dsn, options), 0};
  out.milliseconds = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  return out;
}

// PgBouncer's server_round_robin, set on the transaction instance's admin
// console for the life of this object: 1 hands out the least recently
// freed server connection first instead of the most recent. The console
// is no PostgreSQL session (it takes no SET of a session's settings), so
// it is spoken to through libpq alone.
class RoundRobin {
 public:
  explicit RoundRobin(bool on)
      : console_(PQconnectdb(bouncer_dsn(Pooling::Transaction, "pgbouncer").c_str()), &PQfinish) {
    REQUIRE(PQstatus(console_.get()) == CONNECTION_OK);
    REQUIRE(set(on ? "1" : "0"));
  }
  ~RoundRobin() { set("0"); }  // the harness's PgBouncer ends with the test run either way

 private:
  bool set(const char* value) {
    PGresult* r = PQexec(console_.get(), (std::string("set server_round_robin = ") + value).c_str());
    const bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    return ok;
  }

  std::unique_ptr<PGconn, void (*)(PGconn*)> console_;
};

// The pids of the sessions holding `table`'s advisory lock in `database`.
std::vector<std::string> lock_holders(PgTestEnv& env, const std::string& database, const TableKey& table) {
  const auto key = static_cast<std::uint64_t>(advisory_lock_key(table));
  return PgTestEnv::rows(env.target(),
                         "select pid from pg_locks where locktype = 'advisory' and granted and database = (select"
                         " oid from pg_database where datname = '" + database + "') and classid = " +
                             std::to_string(key >> 32) + " and objid = " + std::to_string(key & 0xffffffffULL) +
                             " and objsubid = 1");
}

void check_refused(const Timed& timed) {
  INFO(timed.probe.message);
  CHECK(timed.probe.verdict == SessionVerdict::NotKept);
  CHECK(timed.probe.through_pooler);
  // Decided in the first round on a quiet pool: the first statement, one
  // more on `state`, one on the probe's own session.
  CHECK(timed.probe.statements <= 3);
  CHECK(timed.probe.message.find("the state connection \"state\" does not keep its session") != std::string::npos);
  CHECK(timed.probe.message.find("pool_mode = transaction") != std::string::npos);
  CHECK(timed.probe.message.find("Use pool_mode = session") != std::string::npos);
  CHECK(timed.probe.message.find("directly to PostgreSQL") != std::string::npos);
  CHECK(timed.milliseconds < 1000);
}

}  // namespace

TEST_CASE("a direct connection keeps its session, and the probe says so in one statement") {
  PgTestEnv env;
  const Timed timed = timed_probe(env.dsn("target"));
  INFO(timed.probe.message);
  CHECK(timed.probe.verdict == SessionVerdict::Kept);
  CHECK_FALSE(timed.probe.through_pooler);
  CHECK(timed.probe.statements == 1);
  CHECK(timed.probe.message.empty());
  MESSAGE("probe on a direct connection: " << timed.milliseconds << " ms");
}

TEST_CASE("the probe refuses to judge a session inside a transaction") {
  PgTestEnv env;
  PgConnection state(env.dsn("target"), "state");
  state.exec("begin");
  state.exec("select 1");
  const SessionProbe probe = probe_session(state, env.dsn("target"));
  CHECK(probe.verdict == SessionVerdict::Unknown);
  CHECK(probe.message.find("inside a transaction") != std::string::npos);
}

TEST_CASE("PgBouncer in session mode keeps the session") {
  PgTestEnv env;
  const std::string dsn = bouncer_dsn(Pooling::Session, database_of(env.target()));
  // The pool starts empty, then holds the servers of the earlier probes.
  double slowest_ms = 0;
  for (int i = 0; i < 3; ++i) {
    const Timed timed = timed_probe(dsn);
    INFO(timed.probe.message);
    CHECK(timed.probe.verdict == SessionVerdict::Kept);
    CHECK(timed.probe.through_pooler);
    CHECK(timed.probe.statements == 7);
    slowest_ms = std::max(slowest_ms, timed.milliseconds);
  }
  MESSAGE("probe through session pooling: at most " << slowest_ms << " ms");
}

TEST_CASE("through transaction pooling a statement is planned each time, never prepared on a server it may not meet again") {
  PgTestEnv env;
  PgConnection pooled(bouncer_dsn(Pooling::Transaction, database_of(env.target())), "pooled");
  // Another client keeps the pool's servers changing hands.
  PgConnection other(bouncer_dsn(Pooling::Transaction, database_of(env.target())), "other");
  const std::string statement = "select count(*) from pg_prepared_statements where $1::int = 1";
  for (int i = 0; i < 20; ++i) {
    CHECK(pooled.exec_prepared(statement, {"1"}).text(0, 0) == "0");
    other.exec("select 1");
  }
  // On a direct connection the same statement finds itself prepared.
  PgConnection direct(env.dsn("target"), "direct");
  CHECK(direct.exec_prepared(statement, {"1"}).text(0, 0) == "1");
}

TEST_CASE("through session pooling a lock ends with its client, as on a direct connection") {
  // PgBouncer runs server_reset_query (DISCARD ALL, which releases
  // advisory locks) on the server connection of a client that leaves, so a
  // tidemark process that dies cannot hand its lock to the next client.
  PgTestEnv env;
  const std::string database = database_of(env.target());
  const TableKey table{"shop", "orders"};
  {
    PgConnection run(bouncer_dsn(Pooling::Session, database), "state");
    PgStateStore store(run);
    const Result<bool> locked = store.lock(RunLock{table, std::nullopt}, false);
    REQUIRE(locked.ok());
    REQUIRE(locked.value());
    CHECK(lock_holders(env, database, table).size() == 1);
  }  // gone without unlocking, as a process that died
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (!lock_holders(env, database, table).empty() && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(lock_holders(env, database, table).empty());
}

TEST_CASE("PgBouncer in transaction or statement mode is refused, quickly, with the cause and the fix") {
  PgTestEnv env;
  struct Pool {
    std::string what;
    std::string dsn;
    int servers = 2;  // its pool size
    double slowest_ms = 0;
  };
  std::vector<Pool> pools = {
      {"transaction pooling, pool size 2", bouncer_dsn(Pooling::Transaction, database_of(env.target()))},
      {"transaction pooling, pool size 1", bouncer_dsn(Pooling::Transaction, "postgres_pool1"), 1},
      {"statement pooling, pool size 2", bouncer_dsn(Pooling::Transaction, "postgres_statement")},
  };
  const auto refused_by_each = [&](bool round_robin) {
    for (Pool& pool : pools) {
      const Timed timed = timed_probe(pool.dsn);
      INFO(pool.what << ", server_round_robin = " << round_robin);
      check_refused(timed);
      pool.slowest_ms = std::max(pool.slowest_ms, timed.milliseconds);
      // With two idle servers handed out least recently freed first, the
      // second transaction of `state` already lands on the other one.
      if (round_robin && pool.servers == 2) {
        CHECK(timed.probe.message.find("one session's transactions ran on server processes") != std::string::npos);
      }
    }
  };
  // With the pools as they are: the new database's is empty.
  refused_by_each(false);
  // Two server connections in each pool of two, opened by two statements
  // at once.
  for (const Pool& pool : pools) {
    std::vector<std::thread> clients;
    for (int i = 0; i < 2; ++i) {
      clients.emplace_back([&pool] { PgConnection(pool.dsn, "warm").exec("select pg_sleep(0.1)"); });
    }
    for (std::thread& client : clients) client.join();
  }
  for (const bool round_robin : {false, true}) {
    RoundRobin order(round_robin);
    for (int i = 0; i < 3; ++i) refused_by_each(round_robin);
  }
  for (const Pool& pool : pools) MESSAGE("refused through " << pool.what << " in at most " << pool.slowest_ms << " ms");
}

TEST_CASE("the probe gives up in its own time when the pooler has no server for its session") {
  PgTestEnv env;
  const std::string dsn = bouncer_dsn(Pooling::Session, database_of(env.target()));
  // Session pooling with a pool of 2: `state` has one server, another
  // client the other, and the probe's session waits in PgBouncer's queue.
  PgConnection other(dsn, "other");
  other.exec("select 1");
  SessionProbeOptions options;
  options.wait = std::chrono::milliseconds(300);
  const Timed timed = timed_probe(dsn, options);
  INFO(timed.probe.message);
  CHECK(timed.probe.verdict == SessionVerdict::Unknown);
  CHECK(timed.probe.message.find("the pool may be full") != std::string::npos);
  CHECK(timed.milliseconds < 1000);
}

TEST_CASE("through transaction pooling a table's lock admits two runs, fails its check and stays behind") {
  // What the probe prevents, step by step as runs of two daemons and
  // another client would meet it. PgBouncer hands out its most recently
  // freed server connection first (its default), and the pool of this
  // fresh database starts with at most one.
  PgTestEnv env;
  migrate_state_schema(env.target());
  const std::string database = database_of(env.target());
  const std::string dsn = bouncer_dsn(Pooling::Transaction, database);
  const TableKey table{"shop", "orders"};

  auto run = std::make_unique<PgConnection>(dsn, "state");
  auto second = std::make_unique<PgConnection>(dsn, "state of another daemon");
  auto other = std::make_unique<PgConnection>(dsn, "other");
  PgStateStore store(*run);
  PgStateStore second_store(*second);
  // The run takes its lock in a transaction of its own; the server
  // connection it ran on goes back to the pool with the lock on it.
  const Result<bool> locked = store.lock(RunLock{table, std::nullopt}, false);
  REQUIRE(locked.ok());
  REQUIRE(locked.value());
  const std::vector<std::string> holder = lock_holders(env, database, table);
  REQUIRE(holder.size() == 1);

  // Another daemon's run of the same table is handed that server
  // connection, where the lock is already held, and so takes it too: two
  // runs of one table at once.
  const Result<bool> also_locked = second_store.lock(RunLock{table, std::nullopt}, false);
  REQUIRE(also_locked.ok());
  CHECK(also_locked.value());

  // Another client's transaction is handed that server connection next.
  other->exec("begin");
  CHECK(std::to_string(other->exec("select pg_backend_pid()").integer(0, 0)) == holder[0]);

  // The run's next transaction gets another server connection, so the
  // check the engine makes before every commit finds no lock there.
  StepRecord step;
  step.lock = RunLock{table, std::nullopt};
  step.run = 1;
  step.move = WatermarkMove{std::nullopt, CursorValue{CursorType::Integer, 42}};
  const Result<StepRecorded> recorded = store.record_step(*run, step);
  REQUIRE(recorded.ok());
  CHECK_FALSE(recorded->lock_held);
  CHECK_FALSE(recorded->written);

  // The unlocks run on a server connection that does not hold the lock
  // either; after every client is gone, the lock is still held by a
  // server connection PgBouncer keeps in its pool.
  store.unlock(RunLock{table, std::nullopt});
  second_store.unlock(RunLock{table, std::nullopt});
  other->exec("rollback");
  other.reset();
  second.reset();
  run.reset();
  CHECK(lock_holders(env, database, table) == holder);
  CHECK(PgTestEnv::rows(env.target(), "select count(*) from pg_stat_activity where pid = " + holder[0]) ==
        std::vector<std::string>{"1"});

  // Only this test's server connection, which holds only this test's lock.
  env.target().exec("select pg_terminate_backend(" + holder[0] + ")");
}

}  // namespace tidemark::testing

namespace tidemark::testing {

TEST_CASE("run refuses a state connection through transaction pooling, and works through session pooling") {
  PgTestEnv env;
  env.source().exec("create table public.events (id int primary key, updated_at timestamptz not null);"
                    "insert into events values (1, now() - interval '1 hour')");
  env.target().exec("create table public.events (id int primary key, updated_at timestamptz not null)");
  const std::string pipeline = R"(pipeline: app
source: source
target: target
schedule: "* * * * *"
tables:
  - { name: events, source_table: events, target_table: events, key: [id], cursor: updated_at }
)";
  const std::string target_db = database_of(env.target());

  env.set_dsn("target", bouncer_dsn(Pooling::Transaction, target_db));
  RunOptions run_app;
  run_app.pipeline = "app";
  CommandRunner refused;
  refused.config_path = env.write_config_files(pipeline);
  CHECK(refused.run(run_run, run_app) == 2);
  CHECK(refused.err.str().find("pool_mode = session") != std::string::npos);
  CHECK(PgTestEnv::rows(env.target(), "select to_regclass('tidemark.runs') is null")[0] == "t");  // nothing ran

  env.set_dsn("target", bouncer_dsn(Pooling::Session, target_db));
  CommandRunner works;
  works.config_path = env.write_config_files(pipeline);
  CHECK(works.run(run_run, run_app) == 0);
  CHECK(PgTestEnv::rows(env.target(), "select count(*) from events")[0] == "1");
}

}  // namespace tidemark::testing
