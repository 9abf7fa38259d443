// mode: snapshot against a real PostgreSQL: the target made equal to the
// source (new, changed, gone rows) in one transaction, unchanged rows
// left alone (same tuple, no dead one), the watermark on the source's
// clock, and a table updated in place while runs go on.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "core/sql/load_statements.h"
#include "core/watermark/safe_horizon.h"
#include "daemon/pg/libpq/pg_connection.h"
#include "pg_test_env.h"

namespace tidemark {
namespace {

using testing::PgTestEnv;

const char* const kSnapshotPipeline =
    "pipeline: shop\nsource: source\ntarget: target\nschedule: \"* * * * *\"\ntables:\n"
    "  - name: balances\n    mode: snapshot\n    source_table: public.balances\n    target_table: raw.balances\n"
    "    key: [account_id]\n";

const char* const kBalances = "(account_id int primary key, branch int not null, balance numeric(12,2), note text)";

PgTestEnv& with_balances(PgTestEnv& env) {
  env.source().exec(std::string("create table public.balances ") + kBalances +
                    "; insert into public.balances select i, i % 10, i * 1.5, 'n' || i from generate_series(1, 500) i");
  env.target().exec(std::string("create schema raw; create table raw.balances ") + kBalances);
  return env;
}

struct SnapshotFixture {
  PgTestEnv env;
  testing::TableRuns runs;
  explicit SnapshotFixture(bool state_in_target = true)
      : env(state_in_target), runs(with_balances(env), env.config(kSnapshotPipeline)) {}

  JobEnded run() { return runs.run("shop", "balances"); }
  std::vector<std::string> source_rows() {
    return PgTestEnv::rows(env.source(), "select * from public.balances order by account_id");
  }
  std::vector<std::string> target_rows() {
    return PgTestEnv::rows(env.target(), "select * from raw.balances order by account_id");
  }
  // Each target row's tuple (ctid) and the transaction that wrote it.
  std::vector<std::string> target_tuples() {
    return PgTestEnv::rows(env.target(), "select account_id, ctid, xmin from raw.balances order by account_id");
  }
  std::string watermark() {
    return PgTestEnv::rows(env.state(), "select value || ' ' || value_type from tidemark.watermarks")[0];
  }
  std::string last_run() {
    return PgTestEnv::rows(env.state(),
                           "select status || ' read ' || rows_read || ' written ' || rows_written || ' window ' || "
                           "coalesce(window_lo, '-') from tidemark.runs order by run_id desc limit 1")[0];
  }
};

}  // namespace

TEST_CASE("snapshot: a first run copies the table; the watermark is the source's clock at the snapshot") {
  SnapshotFixture f;
  const std::string before = PgTestEnv::rows(f.env.source(), "select clock_timestamp()")[0];
  const JobEnded r = f.run();
  const std::string after = PgTestEnv::rows(f.env.source(), "select clock_timestamp()")[0];
  REQUIRE(r.summary.status == RunStatus::Success);
  CHECK(r.summary.rows_read == 500);
  CHECK(f.target_rows() == f.source_rows());
  CHECK(f.last_run() == "success read 500 written 500 window -");
  const std::string stored = PgTestEnv::rows(f.env.state(), "select value from tidemark.watermarks")[0];
  CHECK(f.watermark() == stored + " snapshot");  // a timestamptz, kept apart from a cursor's
  CHECK(f.env.source()
            .exec("select $1::timestamptz <= $2::timestamptz and $2::timestamptz <= $3::timestamptz",
                  {before, stored, after})
            .text(0, 0) == "t");
}

TEST_CASE("snapshot: new, changed and gone rows are written in one run; unchanged rows keep their tuples") {
  SnapshotFixture f;
  REQUIRE(f.run().summary.status == RunStatus::Success);
  const auto tuples = f.target_tuples();
  f.env.source().exec(
      "update public.balances set balance = balance + 1 where account_id in (1, 2);"
      "update public.balances set note = null where account_id = 3;"
      "delete from public.balances where account_id in (4, 5);"
      "insert into public.balances values (1001, 1, 0, 'new')");
  const JobEnded r = f.run();
  REQUIRE(r.summary.status == RunStatus::Success);
  CHECK(r.summary.rows_read == 499);
  CHECK(r.summary.rows_written == 6);  // 3 changed, 1 new, 2 deleted
  CHECK(r.summary.rows_deleted == 2);
  CHECK(f.target_rows() == f.source_rows());
  // Every row the source did not change is the same tuple as before.
  const auto now = f.target_tuples();
  std::size_t kept = 0;
  for (const std::string& t : now) kept += std::count(tuples.begin(), tuples.end(), t);
  CHECK(kept == 495);
}

TEST_CASE("snapshot: a run of an unchanged table writes nothing and leaves no dead tuple") {
  SnapshotFixture f;
  REQUIRE(f.run().summary.status == RunStatus::Success);
  f.env.target().exec("vacuum raw.balances");
  const auto tuples = f.target_tuples();
  const std::string first = f.watermark();
  const JobEnded r = f.run();
  REQUIRE(r.summary.status == RunStatus::Success);
  CHECK(r.summary.rows_written == 0);
  CHECK(f.target_tuples() == tuples);
  CHECK(f.last_run() == "success read 500 written 0 window -");
  // The watermark still moves: to the newer snapshot's time.
  CHECK(f.watermark() > first);
}

TEST_CASE("snapshot: a source table emptied empties the target") {
  SnapshotFixture f;
  REQUIRE(f.run().summary.status == RunStatus::Success);
  f.env.source().exec("delete from public.balances");
  const JobEnded r = f.run();
  REQUIRE(r.summary.status == RunStatus::Success);
  CHECK(r.summary.rows_deleted == 500);
  CHECK(f.target_rows().empty());
}

TEST_CASE("snapshot: with the state in another database the target still ends equal") {
  SnapshotFixture f(/*state_in_target=*/false);
  REQUIRE(f.run().summary.status == RunStatus::Success);
  f.env.source().exec("update public.balances set balance = 0 where account_id <= 10; delete from public.balances "
                      "where account_id > 490");
  REQUIRE(f.run().summary.status == RunStatus::Success);
  CHECK(f.target_rows() == f.source_rows());
}

TEST_CASE("snapshot: a key that may be NULL, under a NULLS NOT DISTINCT index, is matched NULL-safely") {
  PgTestEnv env;
  const char* table = "(code text, name text not null)";
  env.source().exec(std::string("create table public.balances ") + table +
                    "; create unique index on public.balances (code) nulls not distinct;"
                    "insert into public.balances values (null, 'none'), ('a', 'A'), ('b', 'B')");
  env.target().exec(std::string("create schema raw; create table raw.balances ") + table +
                    "; create unique index on raw.balances (code) nulls not distinct");
  const std::string pipeline =
      "pipeline: shop\nsource: source\ntarget: target\nschedule: \"* * * * *\"\ntables:\n"
      "  - name: balances\n    mode: snapshot\n    source_table: public.balances\n    target_table: raw.balances\n"
      "    key: [code]\n";
  testing::TableRuns runs(env, env.config(pipeline));
  REQUIRE(runs.run("shop", "balances").summary.status == RunStatus::Success);
  env.source().exec("delete from public.balances where code = 'a'; update public.balances set name = 'nil' where code "
                    "is null");
  const JobEnded r = runs.run("shop", "balances");
  REQUIRE(r.summary.status == RunStatus::Success);
  CHECK(r.summary.rows_deleted == 1);  // a; the NULL key's row is updated, not deleted and inserted
  CHECK(PgTestEnv::rows(env.target(), "select coalesce(code, '-') || name from raw.balances order by code") ==
        std::vector<std::string>{"bB", "-nil"});
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("regression: a snapshot deletes a gone row before a new row takes its value in another unique column") {
  PgTestEnv env;
  const char* table = "(account_id int primary key, email text not null unique)";
  env.source().exec(std::string("create table public.balances ") + table +
                    "; insert into public.balances values (1, 'a@x'), (2, 'b@x')");
  env.target().exec(std::string("create schema raw; create table raw.balances ") + table);
  testing::TableRuns runs(env, env.config(kSnapshotPipeline));
  REQUIRE(runs.run("shop", "balances").summary.status == RunStatus::Success);
  env.source().exec("delete from public.balances where account_id = 1; insert into public.balances values (3, 'a@x')");
  const JobEnded r = runs.run("shop", "balances");
  CHECK_MESSAGE(r.summary.status == RunStatus::Success, r.summary.error);
  CHECK(PgTestEnv::rows(env.target(), "select account_id || email from raw.balances order by 1") ==
        std::vector<std::string>{"2b@x", "3a@x"});
}

TEST_CASE("regression: a key NULL-able in the source deletes through a hash anti-join, not a loop per row") {
  // 100,000 rows took minutes when every key was matched NULL-safely.
  PgTestEnv env;
  env.target().exec("create table t (id int primary key, v text); create temp table tidemark_stage (id int, v text);"
                    "insert into t select g, 'v' from generate_series(1, 1000) g;"
                    "insert into tidemark_stage select g, 'v' from generate_series(1, 1000) g; analyze t;"
                    "analyze tidemark_stage");
  TableConfig table;
  table.mode = TableMode::Snapshot;
  table.source_table = QualifiedName(std::nullopt, "t");
  table.target_table = QualifiedName(std::nullopt, "t");
  table.key = {"id"};
  const LoadStatements sql = build_load_statements(table, {"id", "v"}, std::nullopt, CopyFormat::Text,
                                                   RelationKind::Table, {{"id", "integer", false, false}});
  const std::vector<std::string> plan = PgTestEnv::rows(env.target(), "explain " + sql.delete_gone);
  std::string text;
  for (const std::string& line : plan) text += line + "\n";
  CHECK_MESSAGE(text.find("Hash") != std::string::npos, text);
  CHECK_MESSAGE(text.find("Nested Loop") == std::string::npos, text);
}

TEST_CASE("regression: a table switched from snapshot to incremental refuses the snapshot's time as its watermark") {
  SnapshotFixture f;
  REQUIRE(f.run().summary.status == RunStatus::Success);
  CHECK(f.watermark().find(" snapshot") != std::string::npos);
  f.env.source().exec("alter table public.balances add column updated_at timestamptz not null default now()");
  f.env.target().exec("alter table raw.balances add column updated_at timestamptz");
  const std::string incremental =
      "pipeline: shop\nsource: source\ntarget: target\nschedule: \"* * * * *\"\ntables:\n"
      "  - name: balances\n    source_table: public.balances\n    target_table: raw.balances\n"
      "    key: [account_id]\n    cursor: updated_at\n    on_schema_change: append_new_columns\n";
  const JobEnded r = testing::TableRuns(f.env, f.env.config(incremental)).run("shop", "balances");
  CHECK(r.summary.status == RunStatus::Failed);
  CHECK(r.summary.error.find("is the time of a snapshot") != std::string::npos);
}

TEST_CASE("regression: a snapshot's fingerprint tells apart values equal under their type but not the same") {
  // Hashed by their types' hash functions, each of these would hash as its
  // old value, and the run would find the table unchanged and leave the
  // old value in place.
  PgTestEnv env;
  const char* ddl = "(id int primary key, n numeric, f float8, i interval, j jsonb, t text collate ci, "
                    "v varchar(10) collate ci, ts timestamptz, b bytea, big bigint, local timestamp, tm time)";
  for (PgConnection* c : {&env.source(), &env.target()}) {
    c->exec("create collation ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)");
  }
  env.source().exec(std::string("create table public.things ") + ddl +
                    "; insert into public.things values (1, 1.0, 0, '1 day', '{\"a\": 1.0}', 'abc', 'abc', "
                    "'2026-01-01 00:00:00+00', '\\x01', 1, '2026-01-01 00:00:00', '00:00')");
  env.target().exec(std::string("create schema raw; create table raw.things ") + ddl);
  testing::TableRuns runs(env, env.config("pipeline: shop\nsource: source\ntarget: target\n"
                                          "schedule: \"* * * * *\"\ntables:\n  - name: things\n    mode: snapshot\n"
                                          "    source_table: public.things\n    target_table: raw.things\n"
                                          "    key: [id]\n"));
  REQUIRE(runs.run("shop", "things").summary.status == RunStatus::Success);
  // The hashes of bigint, timestamp and time fold 64 bits into 32: these
  // pairs hash alike by value.
  for (const std::string change :
       {"n = 1.00", "f = '-0'", "i = '24 hours'", "j = '{\"a\": 1.00}'", "t = 'ABC'", "v = 'ABC'",
        "big = 4294967296", "ts = '2025-12-31 22:48:25.032705+00'", "local = '2025-12-31 22:48:25.032705'",
        "tm = '01:11:34.967297'"}) {
    CAPTURE(change);
    env.source().exec("update public.things set " + change);
    const JobEnded r = runs.run("shop", "things");
    REQUIRE_MESSAGE(r.summary.status == RunStatus::Success, r.summary.error);
    CHECK(r.summary.rows_written == 1);
    CHECK(PgTestEnv::rows(env.target(), "select t::text from raw.things t") ==
          PgTestEnv::rows(env.source(), "select t::text from public.things t"));
  }
  // And nothing changed: nothing written.
  CHECK(runs.run("shop", "things").summary.rows_written == 0);
}

TEST_CASE("regression: a view that repeats a key fails as permanent, not retried as transient") {
  // Its key is the table's word, not an index's: the upsert meets the key
  // twice in one statement, which no retry changes until the source does.
  SnapshotFixture f;
  f.env.source().exec("create view public.balances_twice as select * from public.balances "
                      "union all select * from public.balances where account_id = 7");
  const std::string pipeline =
      "pipeline: shop\nsource: source\ntarget: target\nschedule: \"* * * * *\"\ntables:\n"
      "  - name: balances\n    mode: snapshot\n    source_table: public.balances_twice\n"
      "    target_table: raw.balances\n    key: [account_id]\n";
  testing::TableRuns runs(f.env, f.env.config(pipeline));
  f.env.target().exec("insert into raw.balances values (1, 1, 1, 'changed so that the fingerprints differ')");
  const JobEnded r = runs.run("shop", "balances");
  CHECK(r.summary.status == RunStatus::Failed);
  CHECK(r.summary.error_kind == ErrorKind::Permanent);
  CHECK_MESSAGE(r.summary.error.find("cannot affect row a second time") != std::string::npos, r.summary.error);
  CHECK(PgTestEnv::rows(f.env.target(), "select count(*) from raw.balances") == std::vector<std::string>{"1"});
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("regression: a key equal to the target's but not the same value becomes the source's") {
  // 'abc' and 'ABC' under a case-insensitive collation, 1.0 and 1.00 as
  // numeric: the upsert matched them and never wrote the source's value.
  // The row diff compares keys by their bytes: for a snapshot table 'ABC'
  // is a new key and 'abc' a gone one (a delete and an insert); the
  // incremental upsert updates the row it matches.
  struct Mode {
    const char* extra;
    std::int64_t written;
  };
  for (const Mode& mode : {Mode{"    mode: snapshot\n", 2}, Mode{"    cursor: updated_at\n", 1}}) {
    const char* extra = mode.extra;
    CAPTURE(extra);
    PgTestEnv env;
    const char* ddl = "(code text collate ci primary key, amount numeric not null, price numeric, "
                      "updated_at timestamptz not null default now())";
    for (PgConnection* c : {&env.source(), &env.target()}) {
      c->exec("create collation ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)");
    }
    env.source().exec(std::string("create table public.balances ") + ddl +
                      "; insert into public.balances values ('abc', 1.0, 2.50, now() - interval '1 hour')");
    env.target().exec(std::string("create schema raw; create table raw.balances ") + ddl);
    const std::string pipeline = "pipeline: shop\nsource: source\ntarget: target\nschedule: \"* * * * *\"\ntables:\n"
                                 "  - name: balances\n    source_table: public.balances\n    target_table: raw.balances\n"
                                 "    key: [code]\n" + std::string(extra);
    testing::TableRuns runs(env, env.config(pipeline));
    REQUIRE(runs.run("shop", "balances").summary.status == RunStatus::Success);
    env.source().exec("update public.balances set code = 'ABC', updated_at = now()");
    // Past the safe horizon's margin: a row stamped a moment ago is the next run's.
    std::this_thread::sleep_for(std::chrono::microseconds(kStartReportMargin) + std::chrono::milliseconds(50));
    const JobEnded r = runs.run("shop", "balances");
    REQUIRE_MESSAGE(r.summary.status == RunStatus::Success, r.summary.error);
    CHECK(r.summary.rows_written == mode.written);
    CHECK(PgTestEnv::rows(env.target(), "select code from raw.balances") == std::vector<std::string>{"ABC"});
  }
}

}  // namespace tidemark
