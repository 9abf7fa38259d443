// The incremental engine against a real PostgreSQL: the seeds' cases,
// crash points, compare-and-set, locks and hostile identifiers. Source and
// target are separate databases; some tests also keep the state apart.
#include <doctest/doctest.h>

#include <thread>

#include "core/run/cancel_token.h"
#include "core/run/table_key.h"
#include "daemon/commands/chunk_logger.h"
#include "daemon/pg/state/state_schema.h"
#include "daemon/serve/job_runner.h"
#include "pg_test_env.h"

namespace tidemark {
namespace {

using testing::PgTestEnv;

const char* const kOrdersTable =
    "(order_id bigint primary key, status text not null, amount numeric(12,2), updated_at timestamptz not null)";

std::string orders_pipeline(const std::string& lookback, const std::string& extra = "") {
  return "pipeline: shop\nsource: source\ntarget: target\nschedule: \"* * * * *\"\ntables:\n"
         "  - name: orders\n    source_table: public.orders\n    target_table: raw.orders\n"
         "    key: [order_id]\n    cursor: updated_at\n    lookback: " +
         lookback + "\n" + extra;
}

// Creates the orders tables before the runs apply the state schema.
PgTestEnv& with_orders_tables(PgTestEnv& env) {
  env.source().exec(std::string("create table public.orders ") + kOrdersTable);
  env.target().exec(std::string("create schema raw; create table raw.orders ") + kOrdersTable);
  return env;
}

struct OrdersFixture {
  PgTestEnv env;
  testing::TableRuns runs;

  explicit OrdersFixture(const std::string& lookback = "0s", bool state_in_target = true,
                         const std::string& extra = "")
      : env(state_in_target), runs(with_orders_tables(env), env.config(orders_pipeline(lookback, extra))) {}

  JobEnded run(std::function<void(ChunkStep)> hook = nullptr) {
    return runs.run("shop", "orders", RunTrigger::Manual, std::move(hook));
  }

  void insert(int id, const std::string& status, const std::string& updated_at) {
    env.source().exec("insert into public.orders values ($1, $2, 10.00, " + updated_at + ")",
                      {std::to_string(id), status});
  }

  std::vector<std::string> source_rows() {
    return PgTestEnv::rows(env.source(), "select * from public.orders order by order_id");
  }
  std::vector<std::string> target_rows() {
    return PgTestEnv::rows(env.target(), "select * from raw.orders order by order_id");
  }
  std::string watermark() {
    const auto r = PgTestEnv::rows(env.state(), "select value from tidemark.watermarks where pipeline = 'shop'");
    return r.empty() ? "" : r[0];
  }
};

}  // namespace

TEST_CASE("first load, then a row committed late below the watermark lands through the lookback (order 1008)") {
  OrdersFixture f("10m");
  for (int id = 1001; id <= 1007; ++id) f.insert(id, "new", "clock_timestamp() - interval '1 hour'");
  JobEnded r = f.run();
  REQUIRE(r.summary.status == RunStatus::Success);
  CHECK(r.summary.rows_read == 7);
  const std::string w1 = f.watermark();
  CHECK_FALSE(w1.empty());

  // Order 1008 commits now, but its updated_at is two minutes old: below the watermark.
  f.insert(1008, "paid", "clock_timestamp() - interval '2 minutes'");
  r = f.run();
  REQUIRE(r.summary.status == RunStatus::Success);
  CHECK(f.target_rows() == f.source_rows());
  CHECK(f.watermark() > w1);
}

TEST_CASE("a row exactly at the window's upper bound is read once, by the next window") {
  OrdersFixture f("0s");
  f.insert(1, "new", "clock_timestamp() - interval '1 minute'");
  REQUIRE(f.run().summary.status == RunStatus::Success);
  const std::string hi = f.watermark();
  // A row whose cursor is exactly the previous hi belongs to the next window.
  f.env.source().exec("insert into public.orders values (2, 'new', 1, $1::timestamptz)", {hi});
  const JobEnded r = f.run();
  CHECK(r.summary.rows_read == 1);
  CHECK(f.target_rows() == f.source_rows());
  // And only once: a third run with nothing new reads nothing.
  CHECK(f.run().summary.rows_read == 0);
}

TEST_CASE("an empty batch keeps a real watermark and moves it only to the source's hi") {
  OrdersFixture f("0s");
  f.insert(1, "new", "clock_timestamp() - interval '1 minute'");
  f.run();
  const std::string w1 = f.watermark();
  const JobEnded r = f.run();
  CHECK(r.summary.status == RunStatus::Success);
  CHECK(r.summary.rows_read == 0);
  const std::string w2 = f.watermark();
  CHECK_FALSE(w2.empty());
  CHECK(w2 >= w1);  // ISO-8601 UTC text sorts as time
  const auto source_now = PgTestEnv::rows(f.env.source(), "select clock_timestamp() >= '" + w2 + "'::timestamptz");
  CHECK(source_now[0] == "t");  // never ahead of the source's clock
}

TEST_CASE("a row written by a transaction still open during the run is not lost, even with lookback 0") {
  OrdersFixture f("0s");
  f.insert(1, "new", "clock_timestamp() - interval '1 minute'");
  // Another session writes order 2 and keeps its transaction open.
  const auto dsn_rows = PgTestEnv::rows(f.env.source(), "select current_database()");
  PgConnection late(testing::test_dsn(dsn_rows[0]), "late");
  late.exec("begin");
  late.exec("insert into public.orders values (2, 'new', 1, clock_timestamp())");
  REQUIRE(f.run().summary.status == RunStatus::Success);
  CHECK(f.target_rows().size() == 1);
  // hi stayed at or below the open transaction's start, so its row lands above the watermark.
  const std::string late_start = PgTestEnv::rows(late, "select now()")[0];
  CHECK(PgTestEnv::rows(f.env.source(), "select '" + f.watermark() + "'::timestamptz <= '" + late_start +
                                            "'::timestamptz")[0] == "t");
  late.exec("commit");  // order 2's updated_at is now below the wall clock of the first run
  testing::wait_past_start_report_margin();
  REQUIRE(f.run().summary.status == RunStatus::Success);
  CHECK(f.target_rows() == f.source_rows());
}

TEST_CASE("crash points: the next run repairs each, nothing lost, nothing doubled") {
  for (bool state_in_target : {true, false}) {
    for (ChunkStep crash : {ChunkStep::BeforeTargetWrite, ChunkStep::AfterTargetWrite, ChunkStep::AfterCommit}) {
      INFO("state in target: " << state_in_target << ", crash at step " << static_cast<int>(crash));
      OrdersFixture f("5m", state_in_target);
      for (int id = 1; id <= 50; ++id) f.insert(id, "new", "clock_timestamp() - interval '1 hour'");
      f.run();
      const std::string w1 = f.watermark();
      f.env.source().exec("update public.orders set status = 'paid', updated_at = clock_timestamp() where order_id <= 20");
      for (int id = 51; id <= 60; ++id) f.insert(id, "new", "clock_timestamp()");
      testing::wait_past_start_report_margin();

      const JobEnded crashed = f.run([crash](ChunkStep s) {
        if (s == crash) throw std::runtime_error("injected crash");
      });
      CHECK(crashed.summary.status == RunStatus::Failed);
      if (crash == ChunkStep::AfterCommit) {
        CHECK(f.watermark() > w1);  // committed before the crash
        CHECK(f.target_rows() == f.source_rows());
      } else {
        CHECK(f.watermark() == w1);  // nothing moved
      }
      if (crash == ChunkStep::AfterTargetWrite && state_in_target) {
        CHECK(f.target_rows().size() == 50);  // one transaction: the load rolled back too
      }

      const JobEnded repaired = f.run();
      CHECK(repaired.summary.status == RunStatus::Success);
      CHECK(f.target_rows() == f.source_rows());
      const auto failed = PgTestEnv::rows(
          f.env.state(), "select count(*) from tidemark.runs where status = 'failed' and error like '%injected crash%'");
      CHECK(failed[0] == "1");
    }
  }
}

TEST_CASE("compare-and-set: a second writer that moved the watermark first makes the run fail, committing nothing") {
  OrdersFixture f("0s");
  f.insert(1, "new", "clock_timestamp() - interval '1 minute'");
  f.run();
  f.insert(2, "new", "clock_timestamp() - interval '1 second'");
  const auto before = f.target_rows();
  const auto state_db = PgTestEnv::rows(f.env.state(), "select current_database()")[0];
  const JobEnded r = f.run([&](ChunkStep s) {
    if (s != ChunkStep::AfterTargetWrite) return;
    PgConnection other(testing::test_dsn(state_db), "other writer");
    other.exec("update tidemark.watermarks set value = '2099-01-01T00:00:00Z'");
  });
  CHECK(r.summary.status == RunStatus::Failed);
  CHECK(r.summary.error.find("another writer") != std::string::npos);
  CHECK(f.target_rows() == before);
  CHECK(f.watermark() == "2099-01-01T00:00:00Z");
}

TEST_CASE("a run is skipped while another session holds the table's lock") {
  OrdersFixture f("0s");
  const auto state_db = PgTestEnv::rows(f.env.state(), "select current_database()")[0];
  PgConnection other(testing::test_dsn(state_db), "other replica");
  other.exec("select pg_advisory_lock($1::bigint)", {std::to_string(advisory_lock_key({"shop", "orders"}))});
  CHECK(f.run().summary.status == RunStatus::SkippedLocked);
  other.exec("select pg_advisory_unlock_all()");
  CHECK(f.run().summary.status == RunStatus::Success);
}

TEST_CASE("a run that finds a running row while holding the lock marks it abandoned") {
  OrdersFixture f("0s");
  f.env.state().exec(
      "insert into tidemark.runs (pipeline, table_name, trigger, status) values ('shop', 'orders', 'schedule', "
      "'running')");
  REQUIRE(f.run().summary.status == RunStatus::Success);
  const auto rows = PgTestEnv::rows(f.env.state(), "select status, error from tidemark.runs order by run_id");
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].rfind("failed|abandoned", 0) == 0);
  CHECK(rows[1] == "success|NULL");
}

TEST_CASE("max_window chunks each commit and move the watermark") {
  OrdersFixture f("0s", true, "    max_window: 1d\n");
  for (int day = 0; day < 5; ++day) {
    f.insert(day + 1, "new", "clock_timestamp() - interval '" + std::to_string(5 - day) + " days'");
  }
  const JobEnded r = f.run();
  REQUIRE(r.summary.status == RunStatus::Success);
  CHECK(r.summary.chunks >= 5);
  CHECK(f.target_rows() == f.source_rows());
}

TEST_CASE("hostile identifiers load as identifiers") {
  PgTestEnv env;
  env.source().exec(R"(create schema "we;ird"; create table "we;ird"."Or""ders" ("Key Col" int primary key, "v;drop table x" text, "Up Dated" bigint not null))");
  env.target().exec(R"(create schema "Ra w"; create table "Ra w"."T;x" ("Key Col" int primary key, "v;drop table x" text, "Up Dated" bigint not null))");
  env.source().exec(R"(insert into "we;ird"."Or""ders" select g, 'v' || g || ''';--', g from generate_series(1, 10) g)");
  const auto config = env.config(R"(pipeline: odd
source: source
target: target
schedule: "@hourly"
tables:
  - name: odd
    source_table: '"we;ird"."Or""ders"'
    target_table: '"Ra w"."T;x"'
    key: ['"Key Col"']
    cursor: '"Up Dated"'
)");
  const JobEnded r = testing::TableRuns(env, config).run("odd", "odd");
  INFO(r.summary.error);
  REQUIRE(r.summary.status == RunStatus::Success);
  CHECK(PgTestEnv::rows(env.target(), R"(select * from "Ra w"."T;x" order by 1)") ==
        PgTestEnv::rows(env.source(), R"(select * from "we;ird"."Or""ders" order by 1)"));
  CHECK(PgTestEnv::rows(env.state(), "select value, value_type from tidemark.watermarks")[0] == "11|integer");
}

namespace {

// Loads public.docs (cursor v, a lookback that re-reads every row),
// applies `change` to the source and loads again: that second run.
JobEnded reload_after(PgTestEnv& env, const std::string& change) {
  const auto config = env.config(R"(pipeline: docs
source: source
target: target
schedule: "@hourly"
tables:
  - { name: docs, source_table: docs, target_table: docs, key: [id], cursor: v, lookback: 10 }
)");
  testing::TableRuns runs(env, config);
  REQUIRE(runs.run("docs", "docs").summary.status == RunStatus::Success);
  env.source().exec(change);
  return runs.run("docs", "docs");
}

}  // namespace

TEST_CASE("types without an equality operator (json, point) re-read through the upsert") {
  PgTestEnv env;
  const char* ddl = "(id int primary key, doc json, at point, v bigint not null)";
  env.source().exec(std::string("create table public.docs ") + ddl +
                    "; insert into docs select g, json_build_object('g', g), point(g, g), g from generate_series(1, 5) g");
  env.target().exec(std::string("create table public.docs ") + ddl);
  const JobEnded again = reload_after(env, "update docs set doc = '{\"changed\": true}' where id = 3");
  INFO(again.summary.error);
  REQUIRE(again.summary.status == RunStatus::Success);
  CHECK(again.summary.rows_read == 5);     // the lookback re-reads every row
  CHECK(again.summary.rows_written == 1);  // only the changed one is rewritten
  CHECK(PgTestEnv::rows(env.target(), "select doc::text from docs where id = 3")[0] == "{\"changed\": true}");
}

TEST_CASE("regression: a cursor loaded into a target column without = (json) re-reads through the upsert") {
  // The upsert tested the cursor with IS DISTINCT FROM before the row's
  // image: json has no =, so every run after the first load failed for good.
  PgTestEnv env;
  env.source().exec("create table public.docs (id int primary key, note text, v bigint not null);"
                    "insert into docs select g, 'n' || g, g from generate_series(1, 5) g");
  env.target().exec("create table public.docs (id int primary key, note text, v json)");
  const JobEnded again = reload_after(env, "update docs set note = 'changed' where id = 3");
  REQUIRE_MESSAGE(again.summary.status == RunStatus::Success, again.summary.error);
  CHECK(again.summary.rows_written == 1);  // only the changed one is rewritten
  CHECK(PgTestEnv::rows(env.target(), "select note from docs where id = 3")[0] == "changed");
}

TEST_CASE("a change that = calls no change (1.0 to 1.00, a case change under a case-blind collation) is written") {
  PgTestEnv env;
  const char* collation = "create collation blind (provider = icu, locale = 'und-u-ks-level2', deterministic = false)";
  env.source().exec(collation);
  env.target().exec(collation);
  const char* ddl = "(id int primary key, amount numeric, name text collate blind, v bigint not null)";
  env.source().exec(std::string("create table public.items ") + ddl +
                    "; insert into items values (1, 1.0, 'anna', 1), (2, 2.0, 'bob', 2)");
  env.target().exec(std::string("create table public.items ") + ddl);
  const auto config = env.config(R"(pipeline: items
source: source
target: target
schedule: "@hourly"
tables:
  - { name: items, source_table: items, target_table: items, key: [id], cursor: v, lookback: 10 }
)");
  testing::TableRuns runs(env, config);
  REQUIRE(runs.run("items", "items").summary.status == RunStatus::Success);
  env.source().exec("update items set amount = 1.00 where id = 1; update items set name = 'Bob' where id = 2");
  const JobEnded again = runs.run("items", "items");
  INFO(again.summary.error);
  REQUIRE(again.summary.status == RunStatus::Success);
  CHECK(again.summary.rows_written == 2);
  CHECK(PgTestEnv::rows(env.target(), "select amount::text || ' ' || name from items order by id") ==
        std::vector<std::string>{"1.00 anna", "2.0 Bob"});
}

TEST_CASE("a missing target table, a missing column or a key without a unique index is a clear error") {
  struct Row {
    const char* target_ddl;
    const char* message;
  };
  const Row rows[] = {
      {"create schema raw", "target table raw.orders does not exist"},
      {"create schema raw; create table raw.orders (order_id bigint primary key, status text, updated_at timestamptz)",
       "target table raw.orders has no column amount"},
      {"create schema raw; create table raw.orders (order_id bigint, status text, amount numeric, updated_at timestamptz)",
       "target table raw.orders has no unique index or primary key on exactly (order_id)"},
  };
  for (const Row& row : rows) {
    PgTestEnv env;
    env.source().exec(std::string("create table public.orders ") + kOrdersTable);
    env.target().exec(row.target_ddl);
    const JobEnded r = testing::TableRuns(env, env.config(orders_pipeline("0s"))).run("shop", "orders");
    CHECK(r.summary.status == RunStatus::Failed);
    CHECK_MESSAGE(r.summary.error.find(row.message) != std::string::npos, r.summary.error);
    const auto recorded = PgTestEnv::rows(env.state(), "select error from tidemark.runs");
    REQUIRE(recorded.size() == 1);
    CHECK(recorded[0] == r.summary.error);
  }
}

// Issue 10, item 2: PostgreSQL's DETAIL ("Failing row contains (...)",
// "Key (k)=(1) already exists") carries row values; it was stored in
// tidemark.runs and logged, on several lines.
TEST_CASE("regression: a failed run stores the constraint's name, never the row's values, on one line") {
  OrdersFixture f;
  f.env.target().exec("alter table raw.orders add constraint no_secret check (status <> 'card-4242-4242')");
  f.insert(1, "card-4242-4242", "clock_timestamp() - interval '1 minute'");
  const JobEnded r = f.run();
  CHECK(r.summary.status == RunStatus::Failed);
  CHECK_MESSAGE(r.summary.error.find("no_secret") != std::string::npos, r.summary.error);
  CHECK_MESSAGE(r.summary.error.find("4242") == std::string::npos, r.summary.error);
  CHECK_MESSAGE(r.summary.error.find('\n') == std::string::npos, r.summary.error);
  const auto recorded = PgTestEnv::rows(f.env.state(), "select error from tidemark.runs");
  REQUIRE(recorded.size() == 1);
  CHECK(recorded[0] == r.summary.error);
}

TEST_CASE("migrations are safe to run twice and from two processes at once") {
  PgTestEnv env;
  const auto db = PgTestEnv::rows(env.target(), "select current_database()")[0];
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      try {
        PgConnection c(testing::test_dsn(db), "migrator");
        migrate_state_schema(c);
      } catch (const std::exception&) {
        ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(failures == 0);
  CHECK(migrate_state_schema(env.target()).empty());
  CHECK(PgTestEnv::rows(env.target(), "select version from tidemark.schema_migrations") ==
        (std::vector<std::string>{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16",
                                  "17", "18"}));
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("timestamp and date cursors are compared in the source's own type and time zone") {
  PgTestEnv env;
  env.source().exec(
      "create table public.readings (id int primary key, taken_at timestamp not null, day date not null);"
      "insert into public.readings select g, localtimestamp - interval '2 seconds' - g * interval '1 hour',"
      " current_date - (g / 24)"
      " from generate_series(0, 71) g");
  env.target().exec(
      "create schema raw; create table raw.readings (id int primary key, taken_at timestamp not null, day date not "
      "null); create table raw.daily (id int primary key, taken_at timestamp not null, day date not null)");
  const auto config = env.config(R"(pipeline: sensors
source: source
target: target
schedule: "@hourly"
tables:
  - name: by_time
    source_table: public.readings
    target_table: raw.readings
    key: [id]
    cursor: taken_at
  - name: by_day
    source_table: public.readings
    target_table: raw.daily
    key: [id]
    cursor: day
    lookback: 1d
)");
  testing::TableRuns runs(env, config);
  REQUIRE(runs.run("sensors", "by_time").summary.status == RunStatus::Success);
  REQUIRE(runs.run("sensors", "by_day").summary.status == RunStatus::Success);

  // Every reading up to the source's local now.
  CHECK(PgTestEnv::rows(env.target(), "select count(*) from raw.readings")[0] == "72");
  // A date cursor reads only whole days: today is not complete yet.
  CHECK(PgTestEnv::rows(env.target(), "select count(*) from raw.daily where day = current_date")[0] == "0");
  CHECK(PgTestEnv::rows(env.target(), "select count(*) from raw.daily")[0] ==
        PgTestEnv::rows(env.source(), "select count(*) from public.readings where day < current_date")[0]);
  const auto types = PgTestEnv::rows(env.state(), "select table_name, value_type, value from tidemark.watermarks order by 1");
  REQUIRE(types.size() == 2);
  CHECK(types[0] == "by_day|date|" + PgTestEnv::rows(env.source(), "select current_date")[0]);
  CHECK(types[1].rfind("by_time|timestamp|", 0) == 0);
  CHECK(types[1].find('Z') == std::string::npos);  // wall-clock time, no offset
}

TEST_CASE("a run whose lock session dies before the state commit fails, its rows not landed; the next run repairs it") {
  OrdersFixture f("5m", /*state_in_target=*/false);
  for (int id = 1; id <= 10; ++id) f.insert(id, "new", "clock_timestamp() - interval '1 minute'");
  const auto key = static_cast<std::uint64_t>(advisory_lock_key({"shop", "orders"}));
  PgConnection admin(testing::test_dsn("postgres"), "admin");
  const JobEnded r = f.run([&](ChunkStep s) {
    if (s != ChunkStep::AfterTargetWrite) return;
    admin.exec("select pg_terminate_backend(pid) from pg_locks where locktype = 'advisory' and objid = $1::bigint::oid",
               {std::to_string(key & 0xffffffffULL)});
  });
  CHECK(r.summary.status == RunStatus::Failed);
  CHECK(f.watermark().empty());  // the state never moved
  // Regression: the target committed before the state's record found the
  // lock gone, so rows landed that another holder of the lock could be
  // writing at the same moment. The record now comes before either commit.
  CHECK(f.target_rows().empty());
  const JobEnded repaired = f.run();
  CHECK(repaired.summary.status == RunStatus::Success);
  CHECK(f.target_rows() == f.source_rows());
  // The dead run's row is found running and marked abandoned.
  CHECK(PgTestEnv::rows(f.env.state(), "select count(*) from tidemark.runs where error like 'abandoned%'")[0] == "1");
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("binary COPY carries built-in types exactly: NULLs, arrays, json, special numbers, text with tabs") {
  PgTestEnv env;
  const char* ddl =
      "(id bigint primary key, n numeric, m numeric(12,2), f float8, r real, i int, s smallint, b boolean,"
      " t text, vc varchar(20), c char(3), d date, ts timestamp, tz timestamptz, iv interval, u uuid,"
      " by bytea, j json, jb jsonb, a int[], ta text[], p point, v bigint not null)";
  env.source().exec(std::string("create table public.kinds ") + ddl);
  env.target().exec(std::string("create table public.kinds ") + ddl);
  env.source().exec(
      "insert into kinds values"
      " (1, 1.0, 2.50, 'NaN', '-Infinity', -2147483648, 32767, true, E'tab\\there\\nline \\\\ back', 'varchar',"
      "  'ab', '4713-01-01 BC', '2026-03-29 02:30:00', '2026-03-29 01:30:00.123456+00', '1 year 2 mons 3 days 04:05:06',"
      "  'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '\\x00ff10', '{\"k\": [1, 2.50]}', '{\"k\": [1, 2.50]}',"
      "  '{1,NULL,3}', '{\"a b\",\"c,d\",NULL}', '(1.5,-2)', 1),"
      " (2, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null,"
      "  null, null, null, null, 2),"
      " (3, 1e-30, -0.01, 1e308, 1.17549435e-38, 0, 0, false, '', '', '', 'infinity', '-infinity', 'infinity',"
      "  '-178000000 years', '00000000-0000-0000-0000-000000000000', '', 'null', '[]', '{}', '{}', '(0,0)', 3)");
  const auto config = env.config(R"(pipeline: kinds
source: source
target: target
schedule: "@hourly"
tables:
  - { name: kinds, source_table: kinds, target_table: kinds, key: [id], cursor: v, lookback: 10 }
)");
  testing::TableRuns runs(env, config);
  const std::string all = "select kinds::text from kinds order by id";
  const JobEnded first = runs.run("kinds", "kinds");
  INFO(first.summary.error);
  REQUIRE(first.summary.status == RunStatus::Success);
  CHECK(first.summary.rows_read == 3);
  CHECK(PgTestEnv::rows(env.target(), all) == PgTestEnv::rows(env.source(), all));

  // Through the stage and the upsert: one row changed, the others equal.
  env.source().exec("update kinds set m = 2.51, ta = '{x}', tz = tz + interval '1 microsecond' where id = 1");
  const JobEnded again = runs.run("kinds", "kinds");
  INFO(again.summary.error);
  REQUIRE(again.summary.status == RunStatus::Success);
  CHECK(again.summary.rows_read == 3);
  CHECK(again.summary.rows_written == 1);
  CHECK(PgTestEnv::rows(env.target(), all) == PgTestEnv::rows(env.source(), all));
}

TEST_CASE("a binary window without rows leaves the target untouched, and a later row still lands") {
  OrdersFixture f("0s");
  f.insert(1, "new", "clock_timestamp() - interval '1 hour'");
  REQUIRE(f.run().summary.status == RunStatus::Success);
  const JobEnded empty = f.run();
  INFO(empty.summary.error);
  REQUIRE(empty.summary.status == RunStatus::Success);
  CHECK(empty.summary.rows_read == 0);
  CHECK(empty.summary.rows_written == 0);
  f.insert(2, "paid", "clock_timestamp()");
  testing::wait_past_start_report_margin();
  const JobEnded next = f.run();
  INFO(next.summary.error);
  REQUIRE(next.summary.status == RunStatus::Success);
  CHECK(next.summary.rows_read == 1);
  CHECK(f.target_rows() == f.source_rows());
}

TEST_CASE("a target column of another type, or a type of the database's own, loads through text") {
  PgTestEnv env;
  env.source().exec("create type mood as enum ('calm', 'loud'); create domain cents as bigint check (value >= 0);"
                    "create table public.t (id int primary key, k int, feel mood, price cents, v bigint not null);"
                    "insert into t select g, g * 10, 'loud', g, g from generate_series(1, 4) g");
  // The enum's and the domain's OIDs differ from the source's; k is wider.
  env.target().exec("create type mood as enum ('calm', 'loud'); create domain cents as bigint check (value >= 0);"
                    "create table public.t (id bigint primary key, k bigint, feel mood, price cents, v bigint not null)");
  const auto config = env.config(R"(pipeline: t
source: source
target: target
schedule: "@hourly"
tables:
  - { name: t, source_table: t, target_table: t, key: [id], cursor: v, lookback: 10 }
)");
  testing::TableRuns runs(env, config);
  for (int round = 0; round < 2; ++round) {  // a first load, then a re-read through the stage
    const JobEnded r = runs.run("t", "t");
    INFO(r.summary.error);
    REQUIRE(r.summary.status == RunStatus::Success);
    CHECK(r.summary.rows_read == 4);
  }
  const std::string all = "select t::text from t order by id";
  CHECK(PgTestEnv::rows(env.target(), all) == PgTestEnv::rows(env.source(), all));
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("regression: binary COPY carried reg* columns as raw OIDs, naming other objects in the target") {
  // And an array of a type without binary I/O (aclitem[]) failed to send.
  PgTestEnv env;
  // The same names in both databases, under other OIDs: the source makes
  // objects the target lacks first.
  env.source().exec("create table public.filler (x int); create text search configuration filler_cfg (copy = simple);");
  const char* objects =
      "create table public.referenced (x int);"
      " create text search configuration my_cfg (copy = english);"
      " create table public.refs (id int primary key, rel regclass, cfg regconfig, rels regclass[],"
      " typ regtype, acl aclitem[], v bigint not null)";
  env.source().exec(objects);
  env.target().exec(objects);
  env.source().exec(
      "insert into refs values (1, 'referenced', 'my_cfg', '{referenced,refs}', 'refs', '{postgres=r/postgres}', 1),"
      " (2, 'refs', 'english', null, 'int4', null, 2)");
  REQUIRE(PgTestEnv::rows(env.source(), "select 'referenced'::regclass::oid")[0] !=
          PgTestEnv::rows(env.target(), "select 'referenced'::regclass::oid")[0]);
  const auto config = env.config(R"(pipeline: refs
source: source
target: target
schedule: "@hourly"
tables:
  - { name: refs, source_table: refs, target_table: refs, key: [id], cursor: v, lookback: 10 }
)");
  testing::TableRuns runs(env, config);
  const std::string all = "select refs::text from refs order by id";
  for (int round = 0; round < 2; ++round) {  // a first load, then a re-read through the stage
    const JobEnded r = runs.run("refs", "refs");
    INFO(r.summary.error);
    REQUIRE(r.summary.status == RunStatus::Success);
    CHECK(r.summary.rows_read == 2);
    CHECK(PgTestEnv::rows(env.target(), all) == PgTestEnv::rows(env.source(), all));
  }
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("regression: a first load of a table keyed on every column failed on rows the source holds twice") {
  PgTestEnv env;
  // A log without a key of its own, kept once per distinct row in the
  // target: the upsert's DO NOTHING skips a row seen twice, where a COPY
  // straight into the empty target broke its unique index.
  env.source().exec("create table public.hits (path text not null, v bigint not null);"
                    "insert into hits values ('/a', 1), ('/a', 1), ('/b', 2), ('/b', 2), ('/c', 3)");
  env.target().exec("create table public.hits (path text not null, v bigint not null, primary key (path, v))");
  const auto config = env.config(R"(pipeline: hits
source: source
target: target
schedule: "@hourly"
tables:
  - { name: hits, source_table: hits, target_table: hits, key: [path, v], cursor: v, lookback: 10 }
)");
  testing::TableRuns runs(env, config);
  for (int round = 0; round < 2; ++round) {  // a first load, then a re-read through the stage
    const JobEnded r = runs.run("hits", "hits");
    INFO(r.summary.error);
    REQUIRE(r.summary.status == RunStatus::Success);
    CHECK(r.summary.rows_read == 5);
    CHECK(PgTestEnv::rows(env.target(), "select count(*) from hits")[0] == "3");
  }
}

}  // namespace tidemark
