// create_target against a real PostgreSQL: the target made from the
// source's columns and types (the enums, domains and composites they
// need created with it), NOT NULL and the key, nothing else; in the
// transaction of the first write, so a failed first run leaves nothing;
// refused, naming the type, where a type cannot be made; and said by
// validate beforehand.
#include <doctest/doctest.h>

#include <future>
#include <thread>

#include "core/watermark/safe_horizon.h"
#include "daemon/commands/commands.h"
#include "daemon/commands/validate_command.h"
#include "pg_test_env.h"

namespace tidemark {
namespace {

using testing::PgTestEnv;
using Rows = std::vector<std::string>;

const char* const kSource = R"SQL(
create schema shop;
create type shop.mood as enum ('sad', 'ok', 'happy');
create domain shop.year as integer check (value >= 1901 and value <= 2155);
create type shop.point2 as (x double precision, y double precision);
create table shop.things (
  id bigint generated always as identity primary key,
  name text not null default 'unnamed',
  mood shop.mood,
  moods shop.mood[],
  made shop.year not null,
  at shop.point2,
  doc jsonb,
  total numeric(10,2) generated always as (id * 1.5) stored,
  updated_at timestamptz not null default now()
);
create index on shop.things (name);
insert into shop.things (name, mood, moods, made, at, doc)
  values ('a', 'ok', '{sad,happy}', 2001, '(1,2)', '{"k": 1}'), ('b', null, null, 1999, null, null);
)SQL";

std::string pipeline(const std::string& extra = "") {
  return "pipeline: p\nsource: source\ntarget: target\nschedule: \"@daily\"\ncreate_target: true\ntables:\n"
         "  - name: things\n    source_table: shop.things\n    target_table: copy.things\n    key: [id]\n"
         "    cursor: updated_at\n" + extra;
}

}  // namespace

TEST_CASE("create_target: the first run creates schema, types and table, then loads it") {
  PgTestEnv env;
  env.source().exec(kSource);
  testing::TableRuns runs(env, env.config(pipeline()));
  testing::wait_past_start_report_margin();
  const JobEnded r = runs.run("p", "things");
  REQUIRE_MESSAGE(r.summary.status == RunStatus::Success, r.summary.error);
  CHECK(r.summary.target_created);
  const std::string columns =
      "select string_agg(attname || ' ' || format_type(atttypid, atttypmod) || case when attnotnull then ' not null' "
      "else '' end || case when attidentity <> '' or attgenerated <> '' or atthasdef then ' filled' else '' end, ', ' "
      "order by attnum) from pg_attribute where attrelid = '%.things'::regclass and attnum > 0 and not attisdropped";
  const auto shape = [&](PgConnection& c, const std::string& schema) {
    std::string sql = columns;
    sql.replace(sql.find('%'), 1, schema);
    return PgTestEnv::rows(c, "set search_path = " + schema + "; " + sql);
  };
  // The same columns and types, NOT NULL where the source has it; no
  // default, identity or generation of the source's.
  CHECK(shape(env.target(), "copy").at(0) ==
        std::string{"id bigint not null, name text not null, mood mood, moods mood[], made year not null, at "
             "point2, doc jsonb, total numeric(10,2), updated_at timestamp with time zone not null"});
  // The primary key and nothing else: no other index, no trigger.
  CHECK(PgTestEnv::rows(env.target(), "select indexrelid::regclass::text || ' ' || indisprimary from pg_index where "
                                      "indrelid = 'copy.things'::regclass")
            .at(0) == std::string("things_pkey true"));
  // The types live in the target table's schema, not the source's: two
  // sources with a type of one name stay apart in one warehouse.
  CHECK(PgTestEnv::rows(env.target(), "select enum_range(null::copy.mood)::text") == Rows{"{sad,ok,happy}"});
  CHECK(PgTestEnv::rows(env.target(), "select to_regnamespace('shop') is null") == Rows{"t"});
  CHECK_THROWS(env.target().exec("select 1800::copy.year"));  // the domain keeps its check
  CHECK(PgTestEnv::rows(env.target(), "select id, name, mood, moods, made, at, doc, total from copy.things order by id") ==
        PgTestEnv::rows(env.source(), "select id, name, mood, moods, made, at, doc, total from shop.things order by id"));
  // The next run finds it there and loads on.
  env.source().exec("update shop.things set mood = 'happy', updated_at = now() where id = 2");
  testing::wait_past_start_report_margin();
  const JobEnded again = runs.run("p", "things");
  REQUIRE(again.summary.status == RunStatus::Success);
  CHECK_FALSE(again.summary.target_created);
  CHECK(PgTestEnv::rows(env.target(), "select mood from copy.things where id = 2") == Rows{"happy"});
}

TEST_CASE("create_target: a first run that fails leaves no table, type or schema behind") {
  PgTestEnv env;
  env.source().exec(kSource);
  // A row the target's domain... cannot fail here; a NOT NULL key column
  // with a duplicate can: a view of the table, twice.
  env.source().exec("create view shop.twice as select * from shop.things union all select * from shop.things");
  testing::TableRuns runs(env, env.config("pipeline: p\nsource: source\ntarget: target\nschedule: \"@daily\"\n"
                                           "tables:\n  - name: things\n    source_table: shop.twice\n"
                                           "    target_table: copy.things\n    key: [id]\n    cursor: updated_at\n"
                                           "    create_target: true\n"));
  testing::wait_past_start_report_margin();
  const JobEnded r = runs.run("p", "things");
  CHECK(r.summary.status == RunStatus::Failed);
  CHECK(PgTestEnv::rows(env.target(), "select to_regclass('copy.things') is null, to_regnamespace('copy') is null, "
                                      "to_regtype('copy.mood') is null") == Rows{"t|t|t"});
  CHECK(PgTestEnv::rows(env.state(), "select count(*) from tidemark.watermarks") == Rows{"0"});
}

TEST_CASE("create_target: a type the target lacks and tidemark cannot make is named, by validate and by the run") {
  PgTestEnv env;
  env.source().exec("create extension if not exists hstore; create schema shop;"
                    "create table shop.tagged (id int primary key, tags hstore, updated_at timestamptz not null "
                    "default now()); insert into shop.tagged values (1, 'a=>1')");
  const std::string yaml = "pipeline: p\nsource: source\ntarget: target\nschedule: \"@daily\"\ncreate_target: true\n"
                           "tables:\n  - name: tagged\n    source_table: shop.tagged\n    target_table: shop.tagged\n"
                           "    key: [id]\n    cursor: updated_at\n";
  testing::CommandRunner command;
  command.config_path = env.write_config_files(yaml);
  ValidateOptions validate;
  validate.config_path = command.config_path;
  std::ostringstream out;
  std::ostringstream err;
  CHECK(run_validate(validate, Instant{}, out, err) == 2);
  const std::string refusal = "cannot create target table shop.tagged: column tags needs type public.hstore, which "
                              "the target database lacks: run CREATE EXTENSION \"hstore\" there first";
  CHECK_MESSAGE(err.str().find(refusal) != std::string::npos, err.str());

  testing::TableRuns runs(env, env.config(yaml));
  testing::wait_past_start_report_margin();
  JobEnded r = runs.run("p", "tagged");
  CHECK(r.summary.status == RunStatus::Failed);
  CHECK(r.summary.error_kind == ErrorKind::Permanent);
  CHECK(r.summary.error == refusal);

  // With the extension there, validate says what the run will create, and it does.
  env.target().exec("create extension if not exists hstore");
  out.str("");
  err.str("");
  CHECK_MESSAGE(run_validate(validate, Instant{}, out, err) == 0, err.str());
  CHECK(out.str().find("table tagged: target shop.tagged does not exist: the first run creates it (create_target), 3 "
                       "columns and a primary key on [id]") != std::string::npos);
  r = runs.run("p", "tagged");
  REQUIRE_MESSAGE(r.summary.status == RunStatus::Success, r.summary.error);
  CHECK(PgTestEnv::rows(env.target(), "select tags -> 'a' from shop.tagged") == Rows{"1"});
}

namespace {

// A snapshot table of two countries loaded into a target its first run
// creates, the tables named as given; the target's rows afterwards.
Rows countries_created(const std::string& source_table, const std::string& target_table) {
  PgTestEnv env;
  env.source().exec("create table public.countries (code text primary key, name text not null);"
                    "insert into public.countries values ('de', 'Germany'), ('fr', 'France')");
  testing::TableRuns runs(env, env.config("pipeline: p\nsource: source\ntarget: target\nschedule: \"@daily\"\n"
                                           "create_target: true\ntables:\n  - name: countries\n    mode: snapshot\n"
                                           "    source_table: " + source_table + "\n    target_table: " + target_table +
                                           "\n    key: [code]\n"));
  const JobEnded r = runs.run("p", "countries");
  REQUIRE_MESSAGE(r.summary.status == RunStatus::Success, r.summary.error);
  CHECK(r.summary.target_created);
  return PgTestEnv::rows(env.target(), "select code || name from " + target_table + " order by code");
}

}  // namespace

TEST_CASE("create_target: a snapshot table's target is created with its first snapshot") {
  CHECK(countries_created("public.countries", "raw.countries") == Rows{"deGermany", "frFrance"});
}

TEST_CASE("regression: create_target with a source_table written without its schema could not read its definition") {
  // The definition was read with search_path at pg_catalog, where an
  // unqualified name is not found; every other statement finds it by the
  // session's search_path.
  CHECK(countries_created("countries", "countries") == Rows{"deGermany", "frFrance"});
}

TEST_CASE("create_target: a first run over no rows still creates the target") {
  PgTestEnv env;
  env.source().exec("create table public.empty (id bigint generated by default as identity primary key, v text)");
  testing::TableRuns runs(env, env.config("pipeline: p\nsource: source\ntarget: target\nschedule: \"@daily\"\n"
                                           "tables:\n  - name: empty\n    source_table: public.empty\n"
                                           "    target_table: public.empty\n    key: [id]\n    cursor: id\n"
                                           "    create_target: true\n"));
  const JobEnded r = runs.run("p", "empty");
  REQUIRE_MESSAGE(r.summary.status == RunStatus::Success, r.summary.error);
  CHECK(r.summary.target_created);
  CHECK(PgTestEnv::rows(env.target(), "select to_regclass('public.empty') is not null") == Rows{"t"});
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("regression: two first runs creating one schema and type at once both succeed") {
  // The second waited for the first's uncommitted CREATE SCHEMA, then
  // failed for good on it (a duplicate, a permanent error).
  PgTestEnv env;
  env.source().exec("create type public.mood as enum ('sad', 'happy');"
                    "create table public.a (id int primary key, m public.mood);"
                    "create table public.b (id int primary key, m public.mood);"
                    "insert into public.a values (1, 'sad'); insert into public.b values (2, 'happy')");
  const std::string yaml = "pipeline: p\nsource: source\ntarget: target\nschedule: \"@daily\"\ncreate_target: true\n"
                           "tables:\n"
                           "  - name: a\n    mode: snapshot\n    source_table: public.a\n    target_table: fresh.a\n"
                           "    key: [id]\n"
                           "  - name: b\n    mode: snapshot\n    source_table: public.b\n    target_table: fresh.b\n"
                           "    key: [id]\n";
  const auto config = env.config(yaml);
  testing::TableRuns first(env, config);
  testing::TableRuns second(env, config);
  JobEnded a;
  std::promise<void> a_holds;
  bool b_waited = false;
  bool held = false;
  std::thread slow([&] {
    // Holds its schema and type uncommitted until the other run waits for them.
    PgConnection watch(env.dsn("target"), "watch");
    a = first.run("p", "a", RunTrigger::Manual, [&](ChunkStep step) {
      if (step != ChunkStep::BeforeTargetWrite || held) return;
      held = true;
      a_holds.set_value();
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (!b_waited && std::chrono::steady_clock::now() < deadline) {
        b_waited = PgTestEnv::rows(watch, "select count(*) > 0 from pg_stat_activity "
                                          "where datname = current_database() and wait_event_type = 'Lock'") ==
                   Rows{"t"};
        if (!b_waited) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    });
  });
  a_holds.get_future().wait();
  const JobEnded b = second.run("p", "b");
  slow.join();
  CHECK(b_waited);  // the race was run: b met a's uncommitted schema
  CHECK_MESSAGE(a.summary.status == RunStatus::Success, a.summary.error);
  CHECK_MESSAGE(b.summary.status == RunStatus::Success, b.summary.error);
  CHECK(PgTestEnv::rows(env.target(), "select (select m::text from fresh.a) || (select m::text from fresh.b)") ==
        Rows{"sadhappy"});
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("regression: create_target: two source types of one name, which would be one type in the target's schema, are refused") {
  PgTestEnv env;
  env.source().exec(
      "create schema a; create schema b; create type a.status as enum ('x'); create type b.status as enum ('y', 'z');"
      "create table a.t (id int primary key, s1 a.status, s2 b.status, updated_at timestamptz not null default now())");
  testing::TableRuns runs(env, env.config("pipeline: p\nsource: source\ntarget: target\nschedule: \"@daily\"\n"
                                          "tables:\n  - name: t\n    source_table: a.t\n    target_table: wh.t\n"
                                          "    key: [id]\n    cursor: updated_at\n    create_target: true\n"));
  testing::wait_past_start_report_margin();
  const JobEnded r = runs.run("p", "t");
  CHECK(r.summary.status == RunStatus::Failed);
  CHECK_MESSAGE(r.summary.error.find("which would both be wh.status in the target") != std::string::npos,
                r.summary.error);
  CHECK(r.summary.error.find("a.status") != std::string::npos);
  CHECK(r.summary.error.find("b.status") != std::string::npos);
  CHECK(PgTestEnv::rows(env.target(), "select to_regclass('wh.t') is null") == Rows{"t"});
}

TEST_CASE("regression: the first load into a table create_target made copied as text, not binary") {
  // Built-in types on both sides: a table made by the run takes binary
  // COPY as one that was there before does (a third faster at a million
  // rows, bench/parallel_load.sh).
  PgTestEnv env;
  env.source().exec(
      "create table public.orders (id bigint primary key, customer bigint, status text, amount numeric(12,2), "
      "updated_at timestamptz not null); insert into public.orders select g, g % 7, 'paid', g / 100.0, "
      "now() - interval '1 hour' from generate_series(1, 100) g");
  testing::TableRuns runs(env, env.config("pipeline: p\nsource: source\ntarget: target\nschedule: \"@daily\"\n"
                                          "create_target: true\ntables:\n  - { name: orders, source_table: public.orders, "
                                          "target_table: wh.orders, key: [id], cursor: updated_at }\n"));
  const std::string target_db = PgTestEnv::rows(env.target(), "select current_database()")[0];
  std::string copy_in;
  const JobEnded r = runs.run("p", "orders", RunTrigger::Manual, [&](ChunkStep step) {
    if (step != ChunkStep::AfterTargetWrite) return;
    // The run's target session, in its transaction, last ran the COPY.
    const Rows copies = PgTestEnv::rows(env.target(), "select query from pg_stat_activity where datname = '" +
                                                          target_db + "' and query like 'COPY %' and pid <> "
                                                          "pg_backend_pid()");
    if (!copies.empty()) copy_in = copies[0];
  });
  REQUIRE_MESSAGE(r.summary.status == RunStatus::Success, r.summary.error);
  CHECK(r.summary.target_created);
  CHECK(r.summary.rows_written == 100);
  CHECK(copy_in.find("COPY \"wh\".\"orders\"") == 0);
  CHECK(copy_in.find("(FORMAT binary)") != std::string::npos);
}

}  // namespace tidemark
