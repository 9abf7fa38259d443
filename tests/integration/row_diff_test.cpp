// The row diff of a snapshot table against a real PostgreSQL, as a table
// of hostile schemas: each case loads a table, changes it in the source,
// and the next run must leave the target equal to the source having
// crossed only what differs (its path "diff: ..."), never the whole
// table; then a source truncated and refilled while the diff waits for
// its lock, and a diff that gives up and crosses whole.
#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <thread>

#include "core/watermark/safe_horizon.h"
#include "daemon/pg/pg_source.h"
#include "pg_test_env.h"

namespace tidemark {
namespace {

using testing::PgTestEnv;

struct Case {
  const char* name;
  const char* columns;  // the table's column list, both sides
  const char* key;      // the pipeline's key: [...]
  const char* rows;     // the source's first rows (an INSERT's VALUES or SELECT)
  const char* change;   // what the application does in the source next
  const char* order;    // ORDER BY of the comparison (its columns' text as the target holds them)
  std::int64_t written;  // rows the second run writes (upserted + deleted)
};

const Case kCases[] = {
    {"NULLs in non-key columns, both ways", "(id int primary key, a text, b int)", "id",
     "values (1, 'x', null), (2, null, 2), (3, 'z', 3)",
     "update t set a = null where id = 1; update t set a = 'y', b = null where id = 2", "id", 2},
    {"a case-insensitive collation: a change of case is a change", "(id int primary key, name text collate ci)", "id",
     "values (1, 'abc'), (2, 'Def')", "update t set name = 'ABC' where id = 1", "id", 1},
    {"-0 and 0 are the same under = but not the same value", "(id int primary key, f float8, r real)", "id",
     "values (1, 0, 0), (2, 1.5, 2)", "update t set f = '-0', r = '-0' where id = 1", "id", 1},
    {"numeric scale: 1.0 and 1.00", "(id int primary key, n numeric)", "id", "values (1, 1.0), (2, 2)",
     "update t set n = 1.00 where id = 1", "id", 1},
    {"jsonb: 1 and 1.0, a key reordered", "(id int primary key, doc jsonb)", "id",
     "values (1, '{\"a\": 1}'), (2, '{\"b\": [1, 2]}')",
     "update t set doc = '{\"a\": 1.0}' where id = 1; update t set doc = '{\"b\": [2, 1]}' where id = 2", "id", 2},
    {"arrays: an element NULL, one more element", "(id int primary key, xs int[], ts text[])", "id",
     "values (1, '{1,2}', '{a,b}'), (2, '{3}', '{c}')",
     "update t set xs = '{1,NULL}' where id = 1; update t set ts = '{c,\"\"}' where id = 2", "id", 2},
    {"bytea: a byte more, a byte less", "(id int primary key, b bytea)", "id",
     "values (1, '\\x00'), (2, '\\x0102')", "update t set b = '\\x0000' where id = 1; update t set b = '\\x01' where id = 2",
     "id", 2},
    {"an enum renamed on both sides is unchanged", "(id int primary key, m mood)", "id",
     "values (1, 'sad'), (2, 'happy')", "", "id", 0},
    {"a TOASTed 1 MB text changed in its middle", "(id int primary key, body text)", "id",
     "select 1, repeat('a', 1000000) union all select 2, repeat('b', 1000000)",
     "update t set body = overlay(body placing 'X' from 500000) where id = 1", "id", 1},
    {"a composite key of text and integer: updates, a key change, a delete", "(name text, n int, v int, primary key (name, n))",
     "name, n", "values ('a', 1, 1), ('a', 10, 1), ('a', 2, 1), ('b b', 1, 1), ('é', 1, 1), ('Z', 1, 1)",
     "update t set v = 2 where name = 'a' and n = 10; update t set n = 3 where name = 'b b';"
     " delete from t where name = 'Z'; insert into t values ('', 0, 0)",
     "name collate \"C\", n", 5},
    {"a text key whose collation sorts otherwise than bytes", "(code text collate \"und-x-icu\" primary key, v int)",
     "code", "values ('a', 1), ('B', 1), ('é', 1), ('Z', 1), ('b', 1), ('10', 1), ('9', 1)",
     "update t set v = 2 where code in ('B', 'é', '9'); delete from t where code = 'a'; insert into t values ('A', 1)", "code",
     5},
    {"bigint keys beyond 32 bits and negative", "(id bigint primary key, v int)", "id",
     "values (-4294967296, 1), (1, 1), (4294967297, 1), (9223372036854775807, 1)",
     "update t set v = 2 where id in (-4294967296, 4294967297); delete from t where id = 1;"
     " insert into t values (-9223372036854775808, 1)", "id", 4},
    {"uuid keys in their own order", "(id uuid primary key, v int)", "id",
     "select md5(g::text)::uuid, g from generate_series(1, 50) g",
     "update t set v = -v where v % 7 = 0; delete from t where v = 11; insert into t values ('00000000-0000-0000-0000-000000000000', 0)",
     "id", 9},
    {"a timestamptz key", "(at timestamptz primary key, v int)", "at",
     "select timestamptz '2026-01-01 00:00:00+00' + g * interval '1 hour', g from generate_series(1, 20) g",
     "update t set v = 0 where v < 3; update t set at = at + interval '1 microsecond' where v = 10", "at", 4},
};

std::string pipeline(const Case& c) {
  return std::string("pipeline: p\nsource: source\ntarget: target\nschedule: \"* * * * *\"\ntables:\n"
                     "  - name: t\n    mode: snapshot\n    source_table: public.t\n    target_table: raw.t\n"
                     "    key: [") +
         c.key + "]\n";
}

std::vector<std::string> rows(PgConnection& c, const std::string& table, const char* order) {
  return PgTestEnv::rows(c, "select t::text from " + table + " t order by " + order);
}

// public.t (id int primary key, v int) holding ids 1 to `rows`, loaded
// once into raw.t by a first run.
struct LoadedTable {
  PgTestEnv env;
  testing::TableRuns runs;
  explicit LoadedTable(int rows) : runs(made(env, rows), env.config(pipeline(Case{"", "", "id", "", "", "id", 0}))) {
    REQUIRE(runs.run("p", "t").summary.status == RunStatus::Success);
  }
  static PgTestEnv& made(PgTestEnv& env, int rows) {
    env.source().exec("create table public.t (id int primary key, v int); insert into public.t select g, g from "
                      "generate_series(1, " + std::to_string(rows) + ") g");
    env.target().exec("create schema raw; create table raw.t (id int primary key, v int)");
    return env;
  }
  bool target_is_source() { return rows(env.target(), "raw.t", "id") == rows(env.source(), "public.t", "id"); }
};

}  // namespace

TEST_CASE("row diff: each hostile schema ends equal to its source, crossing only what differs") {
  for (const Case& c : kCases) {
    const std::string name = c.name;
    CAPTURE(name);
    PgTestEnv env;
    for (PgConnection* side : {&env.source(), &env.target()}) {
      side->exec("create collation ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);"
                 "create type mood as enum ('sad', 'happy')");
    }
    env.source().exec(std::string("create table public.t ") + c.columns + "; insert into public.t " + c.rows);
    env.target().exec(std::string("create schema raw; create table raw.t ") + c.columns);
    testing::TableRuns runs(env, env.config(pipeline(c)));
    const TimedSummary first = runs.run("p", "t");
    REQUIRE_MESSAGE(first.summary.status == RunStatus::Success, first.summary.error);
    CHECK(first.summary.snapshot_path == "whole: the target is empty");
    if (name.rfind("an enum", 0) == 0) {
      for (PgConnection* side : {&env.source(), &env.target()}) side->exec("alter type mood rename value 'sad' to 'blue'");
    }
    // One row the target lost, so that the fingerprints differ even where
    // the change alone would not make them.
    env.target().exec("delete from raw.t where ctid = (select min(ctid) from raw.t)");
    if (*c.change) env.source().exec(std::string("set search_path = public; ") + c.change);
    const TimedSummary second = runs.run("p", "t");
    REQUIRE_MESSAGE(second.summary.status == RunStatus::Success, second.summary.error);
    CHECK_MESSAGE(second.summary.snapshot_path.rfind("diff: ", 0) == 0, second.summary.snapshot_path);
    CHECK(rows(env.target(), "raw.t", c.order) == rows(env.source(), "public.t", c.order));
    // The lost row is copied again too, unless the change deleted it or
    // wrote it anyway; no unchanged row is rewritten.
    CHECK_MESSAGE(second.summary.rows_written <= c.written + 1, second.summary.snapshot_path);
    CHECK(second.summary.rows_written >= c.written - 1);
    const TimedSummary third = runs.run("p", "t");
    REQUIRE(third.summary.status == RunStatus::Success);
    CHECK(third.summary.snapshot_path == "unchanged");
    CHECK(third.summary.rows_written == 0);
  }
}

TEST_CASE("row diff: a source truncated and refilled while the diff waits for its lock is read refilled") {
  LoadedTable t(100);
  PgTestEnv& env = t.env;
  env.source().exec("update public.t set v = -v where id <= 5");
  // The refill holds the table until it commits; the run's diff queues
  // behind it for its lock, then must see the new rows, not an empty table.
  PgConnection refill(env.dsn("source"), "refill");
  refill.exec("begin; truncate public.t; insert into public.t select g, g * 10 from generate_series(50, 150) g");
  auto running = std::async(std::launch::async, [&] { return t.runs.run("p", "t"); });
  PgConnection observer(env.dsn("source"), "observer");
  bool waiting = false;
  for (int i = 0; i < 2000 && !waiting; ++i) {
    waiting = PgTestEnv::rows(observer, std::string("select count(*) from pg_stat_activity where wait_event_type = "
                                                    "'Lock' and application_name = '") +
                                            kReadOnlySourceApplication + "'")[0] != "0";
    if (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(waiting);
  refill.exec("commit");
  const TimedSummary r = running.get();
  REQUIRE_MESSAGE(r.summary.status == RunStatus::Success, r.summary.error);
  CHECK(r.summary.rows_read == 101);
  CHECK(t.target_is_source());
}

TEST_CASE("row diff: past a third of the rows differing it crosses the whole table, in the same snapshot") {
  LoadedTable t(60000);
  t.env.source().exec("update public.t set v = -v where id <= 30000; delete from public.t where id > 59000");
  const TimedSummary r = t.runs.run("p", "t");
  REQUIRE_MESSAGE(r.summary.status == RunStatus::Success, r.summary.error);
  CHECK(r.summary.snapshot_path == "whole: more than 20000 rows differ");
  CHECK(r.summary.rows_read == 59000);
  CHECK(r.summary.rows_written == 31000);
  CHECK(t.target_is_source());
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("row diff: a table keyed by an integer diffs block by block, new keys beyond either side's range") {
  LoadedTable t(50000);
  t.env.source().exec(
      "update public.t set v = -v where id % 100 = 7;"                          // 500 scattered
      " delete from public.t where id % 500 = 11;"                             // 100 gone
      " insert into public.t select g, g from generate_series(50001, 50050) g;"  // 50 above the target's range
      " insert into public.t select g, g from generate_series(-49, 0) g");       // 50 below it
  const TimedSummary r = t.runs.run("p", "t");
  REQUIRE_MESSAGE(r.summary.status == RunStatus::Success, r.summary.error);
  CHECK(r.summary.snapshot_path == "diff: 500 changed, 100 missing, 100 gone");
  CHECK(r.summary.rows_read == 50000);
  CHECK(r.summary.rows_written == 700);
  CHECK(t.target_is_source());
  const TimedSummary again = t.runs.run("p", "t");
  CHECK(again.summary.snapshot_path == "unchanged");
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("row diff: an integer key that may be NULL (NULLS NOT DISTINCT) has a block of its own") {
  PgTestEnv env;
  const char* table = "(id int, v text not null)";
  env.source().exec(std::string("create table public.t ") + table +
                    "; create unique index on public.t (id) nulls not distinct;"
                    " insert into public.t select g, 'v' from generate_series(1, 200) g;"
                    " insert into public.t values (null, 'none')");
  env.target().exec(std::string("create schema raw; create table raw.t ") + table +
                    "; create unique index on raw.t (id) nulls not distinct");
  testing::TableRuns runs(env, env.config(pipeline(Case{"", "", "id", "", "", "id", 0})));
  REQUIRE(runs.run("p", "t").summary.status == RunStatus::Success);
  SUBCASE("the NULL key's row changed") {
    env.source().exec("update public.t set v = 'nil' where id is null; update public.t set v = 'w' where id = 100");
    const TimedSummary r = runs.run("p", "t");
    REQUIRE_MESSAGE(r.summary.status == RunStatus::Success, r.summary.error);
    CHECK(r.summary.snapshot_path == "diff: 2 changed, 0 missing, 0 gone");
    CHECK(r.summary.rows_written == 2);
  }
  SUBCASE("the NULL key's row gone, and back") {
    env.source().exec("delete from public.t where id is null");
    TimedSummary r = runs.run("p", "t");
    REQUIRE_MESSAGE(r.summary.status == RunStatus::Success, r.summary.error);
    CHECK(r.summary.snapshot_path == "diff: 0 changed, 0 missing, 1 gone");
    env.source().exec("insert into public.t values (null, 'again')");
    r = runs.run("p", "t");
    REQUIRE_MESSAGE(r.summary.status == RunStatus::Success, r.summary.error);
    CHECK(r.summary.snapshot_path == "diff: 0 changed, 1 missing, 0 gone");
  }
  CHECK(rows(env.target(), "raw.t", "id") == rows(env.source(), "public.t", "id"));
}

}  // namespace tidemark

#include "core/sql/row_hash_statements.h"

namespace tidemark {

TEST_CASE("regression: the rows of many differing blocks were read by a parallel plan, a whole scan per block") {
  // 10 % of a 1,000,000-row table changed made 81 % of its blocks differ;
  // their rows' statement, a join of the block list with a range of the
  // index each, ran for minutes under a parallel plan that tested every
  // row against every block. The rows of chosen blocks are now read in one
  // pass, and every statement of the diff runs without parallel workers.
  PgTestEnv env;
  env.source().exec("create table public.t (id bigint primary key, v int);"
                    " insert into public.t select g, g from generate_series(1, 1000000) g; analyze public.t");
  TableConfig table;
  table.source_table = QualifiedName("public", "t");
  table.target_table = QualifiedName("public", "t");
  table.key = {"id"};
  const std::vector<FingerprintColumn> columns{{"id", "bigint", "bigint"}, {"v", "integer", "integer"}};
  const auto blocks = key_blocks(1, 1000000, 1000000);
  REQUIRE(blocks);
  const auto plan = [&](const std::string& copy) {
    const std::string query = copy.substr(6, copy.rfind(") TO STDOUT") - 6);  // COPY (...) TO STDOUT
    PgConnection c(env.dsn("source"), "planner");
    c.exec(std::string("begin; ") + kRowDiffPlanSettings);
    std::string text;
    for (const std::string& line : PgTestEnv::rows(c, "explain " + query)) text += line + "\n";
    c.exec("rollback");
    return text;
  };
  for (const std::int64_t step : {1, 4, 1000}) {
    CAPTURE(step);
    std::vector<std::int64_t> which;
    for (std::int64_t b = 0; b < blocks->count; b += step) which.push_back(b);
    const std::string rows = plan(row_hash_statements_in(table, columns, true, *blocks, which, false).source);
    CHECK_MESSAGE(rows.find("Nested Loop") == std::string::npos, rows);
    CHECK_MESSAGE(rows.find("Gather") == std::string::npos, rows);
  }
  // The blocks' checksums: a range of the index each, one process.
  const std::string sums = plan(block_statements(table, columns, true, *blocks).source);
  CHECK_MESSAGE(sums.find("Index") != std::string::npos, sums);
  CHECK_MESSAGE(sums.find("Gather") == std::string::npos, sums);
}

}  // namespace tidemark
