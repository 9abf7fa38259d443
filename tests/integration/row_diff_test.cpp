// The row diff of a snapshot table against a real PostgreSQL, as a table
// of hostile schemas: each case loads a table, changes it in the source,
// and the next run must leave the target equal to the source having
// crossed only what differs (its path "diff: ..."), never the whole
// table; then a source truncated, refilled or rewritten while the diff
// waits for its lock, a diff that gives up and crosses whole, keys whose
// collation or type differs between the sides, integer keys at the
// bigint limits, and a stream that fails before the other is read.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <future>
#include <limits>
#include <thread>

#include "core/diff/key_blocks.h"
#include "core/diff/row_diff.h"
#include "core/run/cancel_token.h"
#include "core/sql/row_hash_statements.h"
#include "core/watermark/safe_horizon.h"
#include "daemon/pg/data/pg_row_hash_stream.h"
#include "daemon/pg/data/pg_source.h"
#include "daemon/pg/libpq/source_session.h"
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
  // The change deletes a key or changes one (which deletes the old key):
  // no row is left to be recent for it, so the first look cannot explain
  // the difference and the whole diff runs.
  bool removes_key = false;
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
     "name collate \"C\", n", 5, true},
    {"a text key whose collation sorts otherwise than bytes", "(code text collate \"und-x-icu\" primary key, v int)",
     "code", "values ('a', 1), ('B', 1), ('é', 1), ('Z', 1), ('b', 1), ('10', 1), ('9', 1)",
     "update t set v = 2 where code in ('B', 'é', '9'); delete from t where code = 'a'; insert into t values ('A', 1)", "code",
     5, true},
    {"bigint keys beyond 32 bits and negative", "(id bigint primary key, v int)", "id",
     "values (-4294967296, 1), (1, 1), (4294967297, 1), (9223372036854775807, 1)",
     "update t set v = 2 where id in (-4294967296, 4294967297); delete from t where id = 1;"
     " insert into t values (-9223372036854775808, 1)", "id", 4, true},
    {"uuid keys in their own order", "(id uuid primary key, v int)", "id",
     "select md5(g::text)::uuid, g from generate_series(1, 50) g",
     "update t set v = -v where v % 7 = 0; delete from t where v = 11; insert into t values ('00000000-0000-0000-0000-000000000000', 0)",
     "id", 9, true},
    {"a timestamptz key", "(at timestamptz primary key, v int)", "at",
     "select timestamptz '2026-01-01 00:00:00+00' + g * interval '1 hour', g from generate_series(1, 20) g",
     "update t set v = 0 where v < 3; update t set at = at + interval '1 microsecond' where v = 10", "at", 4, true},
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

// public.t (id int primary key, v int) holding ids 1 to `rows` (or the
// tables given), loaded once into raw.t by a first run.
struct LoadedTable {
  PgTestEnv env;
  testing::TableRuns runs;
  explicit LoadedTable(int rows)
      : LoadedTable("create table public.t (id int primary key, v int); insert into public.t select g, g from "
                    "generate_series(1, " + std::to_string(rows) + ") g",
                    "create table raw.t (id int primary key, v int)") {}
  // `source` and `target`: SQL that makes public.t and raw.t.
  LoadedTable(const std::string& source, const std::string& target)
      : runs(made(env, source, target), env.config(pipeline(Case{"", "", "id", "", "", "id", 0}))) {
    testing::await_older_writers(env.source());
    REQUIRE(runs.run("p", "t").summary.status == RunStatus::Success);
  }
  static PgTestEnv& made(PgTestEnv& env, const std::string& source, const std::string& target) {
    env.source().exec(source);
    env.target().exec("create schema raw; " + target);
    return env;
  }
  // One more run, which finds nothing changed and leaves where each
  // side's snapshot stood: the next run's first look has its horizon.
  void settle() {
    testing::await_older_writers(env.source());
    REQUIRE(runs.run("p", "t").summary.snapshot_path == "unchanged");
  }
  bool target_is_source() { return rows(env.target(), "raw.t", "id") == rows(env.source(), "public.t", "id"); }
};

// A case's table in the source, holding its first rows, and an empty one
// in the target, with the collation and enum the cases use on both sides.
struct HostileTable {
  PgTestEnv env;
  testing::TableRuns runs;
  explicit HostileTable(const Case& c) : runs(made(env, c), env.config(pipeline(c))) {}
  static PgTestEnv& made(PgTestEnv& env, const Case& c) {
    for (PgConnection* side : {&env.source(), &env.target()}) {
      side->exec("create collation ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);"
                 "create type mood as enum ('sad', 'happy')");
    }
    env.source().exec(std::string("create table public.t ") + c.columns + "; insert into public.t " + c.rows);
    env.target().exec(std::string("create schema raw; create table raw.t ") + c.columns);
    return env;
  }
  // The enum's case renames a label on both sides, which writes no row.
  void rename_if_enum_case(const Case& c) {
    if (std::string(c.name).rfind("an enum", 0) != 0) return;
    for (PgConnection* side : {&env.source(), &env.target()}) side->exec("alter type mood rename value 'sad' to 'blue'");
  }
};

}  // namespace

TEST_CASE("row diff: each hostile schema ends equal to its source, crossing only what differs") {
  for (const Case& c : kCases) {
    const std::string name = c.name;
    CAPTURE(name);
    HostileTable h(c);
    PgTestEnv& env = h.env;
    testing::TableRuns& runs = h.runs;
    const JobEnded first = runs.run("p", "t");
    REQUIRE_MESSAGE(first.summary.status == RunStatus::Success, first.summary.error);
    CHECK(first.summary.snapshot_path == "whole: the target is empty");
    h.rename_if_enum_case(c);
    // One row the target lost, so that the fingerprints differ even where
    // the change alone would not make them.
    env.target().exec("delete from raw.t where ctid = (select min(ctid) from raw.t)");
    if (*c.change) env.source().exec(std::string("set search_path = public; ") + c.change);
    const JobEnded second = runs.run("p", "t");
    REQUIRE_MESSAGE(second.summary.status == RunStatus::Success, second.summary.error);
    // The first load left its horizon: the first look, or the whole diff
    // where the recent rows do not explain the change (a delete).
    CHECK_MESSAGE(second.summary.snapshot_path.rfind("diff", 0) == 0, second.summary.snapshot_path);
    CHECK(rows(env.target(), "raw.t", c.order) == rows(env.source(), "public.t", c.order));
    // The lost row is copied again too, unless the change deleted it or
    // wrote it anyway; no unchanged row is rewritten.
    CHECK_MESSAGE(second.summary.rows_written <= c.written + 1, second.summary.snapshot_path);
    CHECK(second.summary.rows_written >= c.written - 1);
    const JobEnded third = runs.run("p", "t");
    REQUIRE(third.summary.status == RunStatus::Success);
    CHECK(third.summary.snapshot_path == "unchanged");
    CHECK(third.summary.rows_written == 0);
  }
}

TEST_CASE("row diff: the rows written since the last snapshot are its first look, for each hostile schema") {
  for (const Case& c : kCases) {
    const std::string name = c.name;
    CAPTURE(name);
    HostileTable h(c);
    PgTestEnv& env = h.env;
    testing::TableRuns& runs = h.runs;
    REQUIRE(runs.run("p", "t").summary.status == RunStatus::Success);
    // An unchanged run leaves where each side's snapshot stood.
    testing::await_older_writers(env.source());
    REQUIRE(runs.run("p", "t").summary.snapshot_path == "unchanged");
    h.rename_if_enum_case(c);
    if (*c.change) env.source().exec(std::string("set search_path = public; ") + c.change);
    const JobEnded changed = runs.run("p", "t");
    REQUIRE_MESSAGE(changed.summary.status == RunStatus::Success, changed.summary.error);
    const std::string path = changed.summary.snapshot_path;
    if (c.written == 0) {
      CHECK(path == "unchanged");
    } else if (c.removes_key) {
      CHECK_MESSAGE(path.rfind("diff: ", 0) == 0, path);
    } else {
      CHECK_MESSAGE(path.rfind("diff of the rows written since the last snapshot: ", 0) == 0, path);
    }
    CHECK(rows(env.target(), "raw.t", c.order) == rows(env.source(), "public.t", c.order));
    CHECK_MESSAGE(changed.summary.rows_written == c.written, path);
    const JobEnded after = runs.run("p", "t");
    REQUIRE(after.summary.status == RunStatus::Success);
    CHECK(after.summary.snapshot_path == "unchanged");
  }
}

TEST_CASE("row diff: a horizon that is wrong costs the whole diff, never a row") {
  struct Wrong {
    const char* what;
    const char* source_xmin;  // SQL on the source for the stored horizon
  };
  const Wrong cases[] = {
      {"after the rows that changed: the recent rows miss them and do not explain the difference",
       "select pg_current_xact_id()::text"},
      {"ahead of the server (another server's, or one restored from an older copy): not used", "select '1000000000000'"},
      {"from long ago: every row is recent, past the limit", "select '3'"},
  };
  for (const Wrong& c : cases) {
    CAPTURE(c.what);
    LoadedTable t(5000);
    t.settle();
    t.env.source().exec("update public.t set v = -v where id % 100 = 1");
    const std::string xmin = PgTestEnv::rows(t.env.source(), c.source_xmin)[0];
    t.env.target().exec("update tidemark.snapshot_horizons set source_xmin = " + xmin);
    const JobEnded r = t.runs.run("p", "t");
    REQUIRE_MESSAGE(r.summary.status == RunStatus::Success, r.summary.error);
    CHECK(r.summary.snapshot_path == "diff: 50 changed, 0 missing, 0 gone");
    CHECK(t.target_is_source());
  }
}

TEST_CASE("row diff: the recent rows explain updates and inserts; anything else is left to the whole diff") {
  LoadedTable t(5000);
  PgTestEnv& env = t.env;
  t.settle();
  const std::string recent = "diff of the rows written since the last snapshot: ";
  SUBCASE("an enum value renamed changes rows without writing them") {
    // The target holds the labels as text, so that it can take the new one.
    env.source().exec("create type mood as enum ('sad', 'happy'); alter table public.t add column m mood default 'sad'");
    env.target().exec("alter table raw.t add column m text default 'sad'");
    env.source().exec("update public.t set m = 'happy' where id % 2 = 0");
    env.target().exec("update raw.t set m = 'happy' where id % 2 = 0");
    REQUIRE(t.runs.run("p", "t").summary.status == RunStatus::Success);
    t.settle();
    env.source().exec("alter type mood rename value 'sad' to 'blue'");
    const JobEnded r = t.runs.run("p", "t");
    REQUIRE_MESSAGE(r.summary.status == RunStatus::Success, r.summary.error);
    CHECK(r.summary.snapshot_path == "diff: 2500 changed, 0 missing, 0 gone");
    CHECK(PgTestEnv::rows(env.target(), "select count(*) from raw.t where m = 'blue'")[0] == "2500");
    CHECK(PgTestEnv::rows(env.target(), "select count(*) from raw.t where m = 'sad'")[0] == "0");
  }
  SUBCASE("a target row changed by hand is a recent row of the target") {
    env.target().exec("update raw.t set v = 0 where id in (7, 4000); insert into raw.t values (9000, 1)");
    const JobEnded r = t.runs.run("p", "t");
    REQUIRE_MESSAGE(r.summary.status == RunStatus::Success, r.summary.error);
    CHECK(r.summary.snapshot_path == recent + "2 changed, 0 missing, 1 gone");
  }
  SUBCASE("updates and inserts only: the recent rows explain it all") {
    env.source().exec("update public.t set v = -v where id % 100 = 1; insert into public.t values (6000, 6), (-1, 1)");
    const JobEnded r = t.runs.run("p", "t");
    REQUIRE_MESSAGE(r.summary.status == RunStatus::Success, r.summary.error);
    CHECK(r.summary.snapshot_path == recent + "50 changed, 2 missing, 0 gone");
    CHECK(r.summary.rows_written == 52);
  }
  SUBCASE("a delete beside the updates: the whole diff finds it") {
    env.source().exec("update public.t set v = -v where id % 100 = 1; delete from public.t where id = 2");
    const JobEnded r = t.runs.run("p", "t");
    REQUIRE_MESSAGE(r.summary.status == RunStatus::Success, r.summary.error);
    CHECK(r.summary.snapshot_path == "diff: 50 changed, 0 missing, 1 gone");
  }
  CHECK(t.target_is_source());
  const JobEnded again = t.runs.run("p", "t");
  CHECK(again.summary.snapshot_path == "unchanged");
}

TEST_CASE("regression: the first changed snapshot after a first load diffed the whole table; the load leaves its horizon") {
  LoadedTable t(5000);  // the first load into an empty target, and no run after it
  t.env.source().exec("update public.t set v = -v where id % 100 = 1; insert into public.t values (6000, 6)");
  testing::await_older_writers(t.env.source());  // this run's horizon serves the next
  const JobEnded r = t.runs.run("p", "t");
  REQUIRE_MESSAGE(r.summary.status == RunStatus::Success, r.summary.error);
  CHECK(r.summary.snapshot_path == "diff of the rows written since the last snapshot: 50 changed, 1 missing, 0 gone");
  CHECK(t.target_is_source());
  // A target row changed by hand after the load is the target's recent row.
  t.env.target().exec("update raw.t set v = 0 where id = 9");
  const JobEnded hand = t.runs.run("p", "t");
  REQUIRE_MESSAGE(hand.summary.status == RunStatus::Success, hand.summary.error);
  CHECK(hand.summary.snapshot_path == "diff of the rows written since the last snapshot: 1 changed, 0 missing, 0 gone");
  CHECK(t.target_is_source());
}

TEST_CASE("regression: a key of another type on each side failed every first look on a target key the source's type cannot hold") {
  // The first look reads the target's recent keys on the source too, as
  // the source's type: 5000000000 is no integer. It is now taken only for
  // keys of one type on both sides.
  LoadedTable t("create table public.t (id integer primary key, v int);"
                " insert into public.t select g, g from generate_series(1, 3000) g",
                "create table raw.t (id bigint primary key, v int)");
  t.settle();
  t.env.target().exec("insert into raw.t values (5000000000, 1)");
  t.env.source().exec("update public.t set v = 0 where id = 7");
  const JobEnded r = t.runs.run("p", "t");
  REQUIRE_MESSAGE(r.summary.status == RunStatus::Success, r.summary.error);
  CHECK(r.summary.snapshot_path == "diff: 1 changed, 0 missing, 1 gone");
  CHECK(t.target_is_source());
}

TEST_CASE("row diff: a partitioned source table's recent rows are found in its partitions") {
  LoadedTable t("create table public.t (id int primary key, v int) partition by range (id);"
                " create table public.t_lo partition of public.t for values from (minvalue) to (1000);"
                " create table public.t_hi partition of public.t for values from (1000) to (maxvalue);"
                " insert into public.t select g, g from generate_series(1, 3000) g",
                "create table raw.t (id int primary key, v int)");
  t.settle();
  // A row moved across partitions is a delete and an insert of the same key.
  t.env.source().exec("update public.t set v = 0 where id in (5, 2500); update public.t set id = 999 where id = 999");
  const JobEnded r = t.runs.run("p", "t");
  REQUIRE_MESSAGE(r.summary.status == RunStatus::Success, r.summary.error);
  CHECK(r.summary.snapshot_path == "diff of the rows written since the last snapshot: 2 changed, 0 missing, 0 gone");
  CHECK(t.target_is_source());
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
  const JobEnded r = running.get();
  REQUIRE_MESSAGE(r.summary.status == RunStatus::Success, r.summary.error);
  CHECK(r.summary.rows_read == 101);
  CHECK(t.target_is_source());
}

TEST_CASE("row diff: past a third of the rows differing it crosses the whole table, in the same snapshot") {
  LoadedTable t(60000);
  t.env.source().exec("update public.t set v = -v where id <= 30000; delete from public.t where id > 59000");
  const JobEnded r = t.runs.run("p", "t");
  REQUIRE_MESSAGE(r.summary.status == RunStatus::Success, r.summary.error);
  CHECK(r.summary.snapshot_path == "whole: more than 20000 rows differ");
  CHECK(r.summary.rows_read == 59000);
  CHECK(r.summary.rows_written == 31000);
  CHECK(t.target_is_source());
}


TEST_CASE("row diff: a table keyed by an integer diffs block by block, new keys beyond either side's range") {
  LoadedTable t(50000);
  t.env.source().exec(
      "update public.t set v = -v where id % 100 = 7;"                          // 500 scattered
      " delete from public.t where id % 500 = 11;"                             // 100 gone
      " insert into public.t select g, g from generate_series(50001, 50050) g;"  // 50 above the target's range
      " insert into public.t select g, g from generate_series(-49, 0) g");       // 50 below it
  const JobEnded r = t.runs.run("p", "t");
  REQUIRE_MESSAGE(r.summary.status == RunStatus::Success, r.summary.error);
  CHECK(r.summary.snapshot_path == "diff: 500 changed, 100 missing, 100 gone");
  CHECK(r.summary.rows_read == 50000);
  CHECK(r.summary.rows_written == 700);
  CHECK(t.target_is_source());
  const JobEnded again = t.runs.run("p", "t");
  CHECK(again.summary.snapshot_path == "unchanged");
}


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
    const JobEnded r = runs.run("p", "t");
    REQUIRE_MESSAGE(r.summary.status == RunStatus::Success, r.summary.error);
    CHECK(r.summary.snapshot_path == "diff: 2 changed, 0 missing, 0 gone");
    CHECK(r.summary.rows_written == 2);
  }
  SUBCASE("the NULL key's row gone, and back") {
    env.source().exec("delete from public.t where id is null");
    JobEnded r = runs.run("p", "t");
    REQUIRE_MESSAGE(r.summary.status == RunStatus::Success, r.summary.error);
    CHECK(r.summary.snapshot_path == "diff: 0 changed, 0 missing, 1 gone");
    env.source().exec("insert into public.t values (null, 'again')");
    // That run left a horizon, but a recent NULL key leaves the first look
    // to the whole diff: it would be matched by IS NOT DISTINCT FROM,
    // which no index serves.
    r = runs.run("p", "t");
    REQUIRE_MESSAGE(r.summary.status == RunStatus::Success, r.summary.error);
    CHECK(r.summary.snapshot_path == "diff: 0 changed, 1 missing, 0 gone");
  }
  CHECK(rows(env.target(), "raw.t", "id") == rows(env.source(), "public.t", "id"));
}


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


TEST_CASE("row diff: a text key collated otherwise on each side ends equal, crossing only what differs") {
  // Both sides stream their keys' bytes in memcmp's order, whatever each
  // column's collation: a key under "C" on one side and under ICU (or a
  // collation that takes 'Z' and 'z' for one key) on the other is the same
  // key exactly when its bytes are.
  struct Sides {
    const char* name;
    const char* source;  // the key's collation in the source
    const char* target;  // and in the target
  };
  const Sides kSides[] = {
      {"ICU in the source, C in the target", "\"und-x-icu\"", "\"C\""},
      {"C in the source, ICU in the target", "\"C\"", "\"und-x-icu\""},
      {"case-insensitive in the source, C in the target", "ci", "\"C\""},
      // Not "C" in the source and case-insensitive in the target: that
      // target merges keys its source keeps apart, and is refused
      // (core/sql/key_equality.h; tests/integration/versions_test.sh).
  };
  for (const Sides& c : kSides) {
    const std::string name = c.name;
    CAPTURE(name);
    PgTestEnv env;
    for (PgConnection* side : {&env.source(), &env.target()}) {
      side->exec("create collation ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)");
    }
    // No two keys that a case-insensitive side takes for one.
    env.source().exec(std::string("create table public.t (code text collate ") + c.source +
                      " primary key, v int); insert into public.t values"
                      " ('a', 1), ('B', 1), ('é', 1), ('Z', 1), ('c', 1), ('10', 1), ('9', 1), ('e', 1)");
    env.target().exec(std::string("create schema raw; create table raw.t (code text collate ") + c.target +
                      " primary key, v int)");
    testing::TableRuns runs(env, env.config(pipeline(Case{"", "", "code", "", "", "code", 0})));
    REQUIRE(runs.run("p", "t").summary.status == RunStatus::Success);
    // 3 changed; 'a' and 'Z' gone as the keys 'A' and 'z' come: one row
    // each under a case-insensitive collation, two keys under the diff's.
    env.source().exec("update public.t set v = 2 where code in ('B', 'é', '9'); delete from public.t where code = 'a';"
                      " insert into public.t values ('A', 1); update public.t set code = 'z' where code = 'Z'");
    const JobEnded r = runs.run("p", "t");
    REQUIRE_MESSAGE(r.summary.status == RunStatus::Success, r.summary.error);
    CHECK(r.summary.snapshot_path == "diff: 3 changed, 2 missing, 2 gone");
    CHECK(r.summary.rows_written == 7);
    CHECK(rows(env.target(), "raw.t", "code collate \"C\"") == rows(env.source(), "public.t", "code collate \"C\""));
    CHECK(runs.run("p", "t").summary.snapshot_path == "unchanged");
  }
}

namespace {

// Whether a session of `application` waits for a lock within 20 s.
bool waits_for_lock(PgConnection& observer, const std::string& application) {
  for (int i = 0; i < 2000; ++i) {
    if (PgTestEnv::rows(observer, "select count(*) from pg_stat_activity where wait_event_type = 'Lock' and "
                                  "application_name = '" + application + "'")[0] != "0") {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

}  // namespace

TEST_CASE("row diff: a source rewritten while the diff waits for its lock is read rewritten, or the run retries") {
  // A rewrite gives the table new storage and, for ALTER ... TYPE, new
  // types; the run's catalog was read before it. Either the diff reads the
  // rewritten rows as they are, or the run fails transiently with the
  // target as it was and the next run loads them: never an empty or a
  // partial target.
  struct Rewrite {
    const char* name;
    const char* sql;      // committed by another session while the run waits
    bool in_transaction;  // else it runs alone, queued behind a reader the run then queues behind
    const char* failure;  // what the run's transient failure says; nullptr: it reads the rewritten rows
    const char* path;     // the snapshot_path of the run that loads them
  };
  const Rewrite kRewrites[] = {
      {"ALTER COLUMN ... TYPE bigint of a non-key column",
       "alter table public.t alter column v type bigint; update public.t set v = v * 10 where id between 10 and 12", true,
       "changed while the chunk read it (v integer -> bigint)", "diff: 8 changed, 0 missing, 5 gone"},
      {"ALTER COLUMN ... TYPE bigint of the key",
       "alter table public.t alter column id type bigint; update public.t set v = v * 10 where id between 10 and 12",
       true, "changed while the chunk read it (id integer -> bigint)", "diff: 8 changed, 0 missing, 5 gone"},
      {"VACUUM FULL", "vacuum full public.t", false, nullptr, "diff: 5 changed, 0 missing, 5 gone"},
  };
  for (const Rewrite& c : kRewrites) {
    const std::string name = c.name;
    CAPTURE(name);
    PgTestEnv env;
    env.source().exec("create table public.t (id int primary key, v int);"
                      " insert into public.t select g, g from generate_series(1, 100) g");
    // The target's columns are bigint already: the source retyped to
    // bigint is then no drift, and its next run may load it.
    env.target().exec("create schema raw; create table raw.t (id bigint primary key, v bigint)");
    testing::TableRuns runs(env, env.config(pipeline(Case{"", "", "id", "", "", "id", 0})));
    REQUIRE(runs.run("p", "t").summary.status == RunStatus::Success);
    env.source().exec("update public.t set v = -v where id <= 5; delete from public.t where id > 95");
    const std::vector<std::string> before = rows(env.target(), "raw.t", "id");

    PgConnection holder(env.dsn("source"), "holder");
    PgConnection observer(env.dsn("source"), "observer");
    std::future<void> alone;
    if (c.in_transaction) {
      holder.exec(std::string("begin; ") + c.sql);
    } else {
      holder.exec("begin; lock table public.t in access share mode");
      alone = std::async(std::launch::async, [&] {
        PgConnection rewriter(env.dsn("source"), "rewriter");
        rewriter.exec("set application_name = 'rewriter'");
        rewriter.exec(c.sql);
      });
      CHECK(waits_for_lock(observer, "rewriter"));
    }
    auto running = std::async(std::launch::async, [&] { return runs.run("p", "t"); });
    // CHECK, not REQUIRE: the holder must commit, or the threads wait for good.
    CHECK(waits_for_lock(observer, kReadOnlySourceApplication));
    holder.exec("commit");
    if (alone.valid()) alone.get();
    const JobEnded r = running.get();
    JobEnded loaded = r;
    if (c.failure != nullptr) {
      REQUIRE(r.summary.status == RunStatus::Failed);
      CHECK(r.summary.error_kind == ErrorKind::Transient);
      CHECK_MESSAGE(r.summary.error.find(c.failure) != std::string::npos, r.summary.error);
      CHECK(rows(env.target(), "raw.t", "id") == before);
      loaded = runs.run("p", "t");
    }
    REQUIRE_MESSAGE(loaded.summary.status == RunStatus::Success, loaded.summary.error);
    CHECK(loaded.summary.snapshot_path == c.path);
    CHECK(rows(env.target(), "raw.t", "id") == rows(env.source(), "public.t", "id"));
    CHECK(runs.run("p", "t").summary.snapshot_path == "unchanged");
  }
}


TEST_CASE("row diff: integer keys with huge gaps or at the bigint limits end equal") {
  constexpr const char* kMinSql = "(-9223372036854775808)::bigint";
  constexpr const char* kMaxSql = "9223372036854775807::bigint";
  struct Keys {
    const char* name;
    std::string ids;     // a SELECT of the source's first keys
    std::string change;  // what the application does next
    const char* path;    // the second run's snapshot_path
    // The key range over both sides and the rows that key_blocks is
    // given, and whether it cuts them (else every row's hash is compared).
    std::int64_t min;
    std::int64_t max;
    std::int64_t rows;
    bool blocks;
  };
  constexpr std::int64_t kLow = std::numeric_limits<std::int64_t>::min();
  constexpr std::int64_t kHigh = std::numeric_limits<std::int64_t>::max();
  const Keys kKeys[] = {
      {"the smallest and the largest bigint in one table",
       std::string("select unnest(array[") + kMinSql + ", " + kMinSql + " + 1, -1, 0, 1, " + kMaxSql + " - 1, " + kMaxSql +
           "]) union all select g from generate_series(1000, 1100) g",
       std::string("update public.t set v = -v where id in (") + kMinSql + ", 0, " + kMaxSql + "); delete from public.t where id = " +
           kMaxSql + " - 1; insert into public.t values (" + kMaxSql + " - 2, 0)",
       "diff: 3 changed, 1 missing, 1 gone", kLow, kHigh, 108, false},
      {"clusters 10^18 apart", "select g * 1000000000000000000 + h from generate_series(-4, 4) g, generate_series(0, 99) h",
       "update public.t set v = -v where id in (-4000000000000000000, 42, 4000000000000000099);"
       " delete from public.t where id = 1000000000000000005; insert into public.t values (2500000000000000000, 0)",
       "diff: 3 changed, 1 missing, 1 gone", -4000000000000000000, 4000000000000000099, 900, true},
      {"from the smallest bigint up", std::string("select ") + kMinSql + " + g from generate_series(0, 199) g",
       std::string("update public.t set v = -v where id in (") + kMinSql + ", " + kMinSql + " + 100);"
           " delete from public.t where id = " + kMinSql + " + 199; insert into public.t values (" + kMinSql + " + 1000, 0)",
       "diff: 2 changed, 1 missing, 1 gone", kLow, kLow + 1000, 200, true},
      {"up to the largest bigint", std::string("select ") + kMaxSql + " - g from generate_series(0, 199) g",
       std::string("update public.t set v = -v where id in (") + kMaxSql + ", " + kMaxSql + " - 100);"
           " delete from public.t where id = " + kMaxSql + " - 199; insert into public.t values (" + kMaxSql + " - 1000, 0)",
       "diff: 2 changed, 1 missing, 1 gone", kHigh - 1000, kHigh, 200, false},
  };
  for (const Keys& c : kKeys) {
    const std::string name = c.name;
    CAPTURE(name);
    CHECK(key_blocks(c.min, c.max, c.rows).has_value() == c.blocks);
    PgTestEnv env;
    env.source().exec("create table public.t (id bigint primary key, v int); insert into public.t select id, 1 from (" +
                      c.ids + ") k(id)");
    env.target().exec("create schema raw; create table raw.t (id bigint primary key, v int)");
    testing::TableRuns runs(env, env.config(pipeline(Case{"", "", "id", "", "", "id", 0})));
    REQUIRE(runs.run("p", "t").summary.status == RunStatus::Success);
    env.source().exec(c.change);
    const JobEnded r = runs.run("p", "t");
    REQUIRE_MESSAGE(r.summary.status == RunStatus::Success, r.summary.error);
    CHECK(r.summary.snapshot_path == c.path);
    CHECK(rows(env.target(), "raw.t", "id") == rows(env.source(), "public.t", "id"));
    CHECK(runs.run("p", "t").summary.snapshot_path == "unchanged");
  }
}

TEST_CASE("row diff: a smallint key loaded into a bigint target diffs as one integer order") {
  PgTestEnv env;
  env.source().exec("create table public.t (id smallint primary key, v int);"
                    " insert into public.t select g, g from generate_series(-100, 200) g;"
                    " insert into public.t values (-32768, 0), (32767, 0)");
  env.target().exec("create schema raw; create table raw.t (id bigint primary key, v int)");
  testing::TableRuns runs(env, env.config(pipeline(Case{"", "", "id", "", "", "id", 0})));
  REQUIRE(runs.run("p", "t").summary.status == RunStatus::Success);
  // A key only the wider target can hold is gone like any other.
  env.target().exec("insert into raw.t values (100000, 1), (-4294967296, 1)");
  env.source().exec("update public.t set v = v + 1 where id in (-32768, 7, 32767); delete from public.t where id = 150;"
                    " insert into public.t values (1000, 0)");
  const JobEnded r = runs.run("p", "t");
  REQUIRE_MESSAGE(r.summary.status == RunStatus::Success, r.summary.error);
  CHECK(r.summary.snapshot_path == "diff: 3 changed, 1 missing, 3 gone");
  CHECK(r.summary.rows_written == 7);
  CHECK(rows(env.target(), "raw.t", "id") == rows(env.source(), "public.t", "id"));
  CHECK(runs.run("p", "t").summary.snapshot_path == "unchanged");
}


TEST_CASE("regression: a key range from the smallest bigint to -1 failed its blocks' statement as bigint out of range") {
  // Such a range spans 2^63 keys: its blocks' ends, origin + (b + 1) *
  // width, fit a bigint, but (b + 1) * width alone did not, nor did the
  // width of a single block (the range's full span, for fewer than 32
  // rows). Every run of such a table failed before it diffed a row.
  struct Keys {
    const char* name;
    const char* ids;  // the source's first keys, from the smallest bigint and down from -1
    std::int64_t rows;
  };
  const Keys kKeys[] = {
      {"many rows: the last block ends past what a bigint holds from 0", "generate_series(0, 99)", 200},
      {"few rows: one block as wide as the range", "generate_series(0, 4)", 10},
  };
  for (const Keys& c : kKeys) {
    const std::string name = c.name;
    CAPTURE(name);
    PgTestEnv env;
    env.source().exec(std::string("create table public.t (id bigint primary key, v int);"
                                  " insert into public.t select (-9223372036854775808)::bigint + g, 1 from ") +
                      c.ids + " g; insert into public.t select -1 - g, 1 from " + c.ids + " g");
    env.target().exec("create schema raw; create table raw.t (id bigint primary key, v int)");
    testing::TableRuns runs(env, env.config(pipeline(Case{"", "", "id", "", "", "id", 0})));
    REQUIRE(runs.run("p", "t").summary.status == RunStatus::Success);
    env.source().exec("update public.t set v = 2 where id in ((-9223372036854775808)::bigint, -1);"
                      " delete from public.t where id = -2");
    const JobEnded r = runs.run("p", "t");
    REQUIRE_MESSAGE(r.summary.status == RunStatus::Success, r.summary.error);
    CHECK(r.summary.snapshot_path == "diff: 2 changed, 0 missing, 1 gone");
    CHECK(r.summary.rows_read == c.rows - 1);
    CHECK(rows(env.target(), "raw.t", "id") == rows(env.source(), "public.t", "id"));
    CHECK(runs.run("p", "t").summary.snapshot_path == "unchanged");
  }
}


TEST_CASE("regression: a source stream that failed before the target's was read hung the diff for good") {
  // The merge reads the source's first row before the target's. A source
  // statement that failed at once (a statement_timeout during its sort, a
  // key range past bigint) left the target's COPY unread, and abandoning
  // it asked libpq for results that, the COPY's first one never read,
  // were the COPY's own again and again: a run at full CPU, its
  // transactions open, until the process was killed.
  PgTestEnv env;
  env.target().exec("create table public.t (id int primary key); insert into public.t select generate_series(1, 10)");
  PgConnection source(env.dsn("source"), "source");
  PgConnection target(env.dsn("target"), "target");
  CancelToken cancel;
  const std::vector<KeyOrder> order{KeyOrder::Integer};
  auto diffed = std::async(std::launch::async, [&] {
    PgRowHashStream from_source(source, "COPY (SELECT 1::bigint, (1 / 0)::bigint) TO STDOUT (FORMAT binary)", order,
                                cancel);
    PgRowHashStream from_target(
        target, "COPY (SELECT id::bigint, hashint4extended(id, 0) FROM public.t ORDER BY 1) TO STDOUT (FORMAT binary)",
        order, cancel);
    return diff_rows(from_source, from_target, order, row_diff_limits(10));
  });
  if (diffed.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
    MESSAGE("the diff still runs after 20 s");
    std::abort();  // its thread cannot be stopped, nor the test ended while it runs
  }
  const Result<RowDiff> r = diffed.get();
  REQUIRE_FALSE(r);
  CHECK_MESSAGE(r.failure().message.find("division by zero") != std::string::npos, r.failure().message);
  // Both sessions are usable again.
  CHECK(PgTestEnv::rows(source, "select 1") == std::vector<std::string>{"1"});
  CHECK(PgTestEnv::rows(target, "select count(*) from public.t") == std::vector<std::string>{"10"});
}

}  // namespace tidemark
