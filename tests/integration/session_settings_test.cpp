// Values arrive exactly as the source holds them whatever the server, a
// database or role default or the DSN set for how values are printed and
// parsed: every path (binary and text first loads, the upsert, a cursor
// backfill, partitions, reconcile, verify) runs with hostile defaults on
// both sides, each of which alone used to corrupt the text path.
#include <doctest/doctest.h>

#include <thread>

#include "core/watermark/safe_horizon.h"
#include "daemon/commands/commands.h"
#include "pg_test_env.h"

namespace tidemark {
namespace {

using testing::PgTestEnv;

struct Setting {
  const char* name;
  const char* value;
};

// Each one alone changes what a session prints or parses.
const std::vector<Setting> kHostileSource = {
    {"datestyle", "SQL, DMY"},         // 2026-04-03 prints as 03/04/2026, a zone as its abbreviation
    {"intervalstyle", "sql_standard"},  // -1 day -02:00:00 prints as -1 -2:00:00
    {"extra_float_digits", "0"},        // 0.1 + 0.2 prints as 0.3
    {"bytea_output", "escape"},
    {"timezone", "Asia/Kolkata"},       // IST, which a server in another zone reads as Israel's
    {"client_encoding", "LATIN1"},      // no euro sign
    {"default_transaction_isolation", "repeatable read"},
};
const std::vector<Setting> kHostileTarget = {
    {"datestyle", "SQL, MDY"},
    {"intervalstyle", "iso_8601"},
    {"extra_float_digits", "-15"},
    {"timezone", "Pacific/Chatham"},
    {"xmloption", "document"},       // refuses an XML fragment
    {"array_nulls", "off"},          // {NULL} reads as the string 'NULL'
    {"client_encoding", "WIN1252"},  // UTF-8 bytes read as three characters each
};

std::string alter_database(const std::vector<Setting>& settings) {
  std::string sql = "do $$ begin";
  for (const Setting& s : settings) {
    sql += " execute format('alter database %I set " + std::string(s.name) + " = %L', current_database(), '" +
           s.value + "');";
  }
  return sql + " end $$";
}

// The same columns on both sides; `e`, an enum, makes t_text travel as
// text, while t_binary has only built-in types and travels in binary.
const char* const kColumns =
    "(id int primary key, d date, ts timestamp, tstz timestamptz, iv interval, f8 float8, f4 real, n numeric,"
    " b bytea, m money, x xml, arr text[], j jsonb, note text, e mood,"
    " updated_at timestamptz not null default '2026-11-30 12:00+00')";

const char* const kRows =
    "insert into public.t_text (id, d, ts, tstz, iv, f8, f4, n, b, m, x, arr, j, note, e) values"
    " (1, '2026-04-03', '2026-04-03 10:00:00.123456', '2026-04-03 10:00+00', '-1 day -02:00:00', 0.1::float8 + 0.2,"
    "  '0.1', 1.10, '\\x00ff5c', 1234.56, 'a<b/>', array[null, 'NULL', 'a,b', 'é€'], '{\"k\": \"é€\"}',"
    "  e'tab\\there € é', 'a'),"
    " (2, '2026-12-31', '1999-01-08 04:05:06', '1999-01-08 04:05:06.5-08', '1 year 2 mons -3 days 04:05:06.789',"
    "  1e-300, 'NaN', '-0.000001', '', -0.5, '<doc/>', '{}', '[1.5, null]', '', 'b'),"
    " (3, '0044-03-15 BC', '-infinity', 'infinity', '-178000000 years', '-Infinity', '3.4e38', 'NaN', null, null,"
    "  null, null, null, null, null);"
    "insert into public.t_binary select id, d, ts, tstz, iv, f8, f4, n, b, m, x, arr, j, note, null from public.t_text";

const char* const kSessionSettingsPipeline = R"(pipeline: p
source: source
target: target
schedule: "*/5 * * * *"
tables:
  - name: t_text
    source_table: public.t_text
    target_table: raw.t_text
    key: [id]
    cursor: updated_at
    deletes: { reconcile: "0 3 * * *" }
  - name: t_binary
    source_table: public.t_binary
    target_table: raw.t_binary
    key: [id]
    cursor: updated_at
  - name: per_day
    mode: partition
    partition: { column: d, unit: day }
    query: |
      select d, count(*) as n, sum(f8) as f8, max(iv) as iv, max(tstz) as tstz, string_agg(note, ',') as note
      from t_text where d >= $1 and d < $2 group by d
    target_table: raw.per_day
)";

struct Hostile : testing::CommandRunner {
  PgTestEnv env;

  Hostile(const std::vector<Setting>& on_source = kHostileSource,
          const std::vector<Setting>& on_target = kHostileTarget) {
    const std::string types = "create type mood as enum ('a', 'b');";
    env.source().exec(types + "create table public.t_text " + kColumns + "; create table public.t_binary " + kColumns);
    env.source().exec(kRows);
    env.target().exec(types + "create schema raw; create table raw.t_text " + kColumns +
                      "; create table raw.t_binary " + kColumns +
                      "; create table raw.per_day (d date, n bigint, f8 float8, iv interval, tstz timestamptz,"
                      " note text)");
    env.source().exec(alter_database(on_source));
    env.target().exec(alter_database(on_target));
    config_path = env.write_config_files(kSessionSettingsPipeline);
  }

  int run_table(const std::string& table) {
    RunOptions options;
    options.pipeline = "p";
    options.table = table;
    return run(run_run, options);
  }

  // Both sides, read by the test's own sessions (opened before the hostile
  // defaults, with the same settings on both sides).
  std::string source(const std::string& table) { return lines(env.source(), "public." + table); }
  std::string target(const std::string& table) { return lines(env.target(), "raw." + table); }

  static std::string lines(PgConnection& connection, const std::string& table) {
    std::string out;
    for (const std::string& row : PgTestEnv::rows(connection, "select * from " + table + " order by id")) {
      out += row + "\n";
    }
    return out;
  }
};

}  // namespace

TEST_CASE("regression: each hostile default alone, on either side, no longer corrupts a text load") {
  for (const bool on_source : {true, false}) {
    for (const Setting& setting : on_source ? kHostileSource : kHostileTarget) {
      CAPTURE(on_source);
      CAPTURE(std::string(setting.name));
      Hostile h(on_source ? std::vector<Setting>{setting} : std::vector<Setting>{},
                on_source ? std::vector<Setting>{} : std::vector<Setting>{setting});
      INFO(h.err.str());
      CHECK(h.run_table("t_text") == 0);
      CHECK(h.target("t_text") == h.source("t_text"));
    }
  }
}

TEST_CASE("regression: hostile output settings on either side no longer corrupt any path") {
  Hostile h;
  // First loads: binary (built-in types only) and text (an enum).
  REQUIRE(h.run_table("t_binary") == 0);
  REQUIRE(h.run_table("t_text") == 0);
  INFO(h.err.str());
  CHECK(h.target("t_binary") == h.source("t_binary"));
  CHECK(h.target("t_text") == h.source("t_text"));
  // The text path parsed a float, an interval, a date and a zone's
  // abbreviation as the source meant them.
  CHECK(PgTestEnv::rows(h.env.target(), "select f8 = 0.1::float8 + 0.2, iv = interval '-1 day -02:00:00',"
                                        " d = date '2026-04-03', tstz = timestamptz '2026-04-03 10:00+00',"
                                        " arr[1] is null and arr[2] = 'NULL'"
                                        " from raw.t_text where id = 1")[0] == "t|t|t|t|t");

  // The upsert: rows changed in the source replace the target's.
  for (const char* table : {"t_text", "t_binary"}) {
    h.env.source().exec(std::string("update public.") + table +
                        " set f8 = f8 * 3, iv = iv - interval '1 second', d = d + 1, updated_at = now()"
                        " where id in (1, 2)");
  }
  // Rows stamped within kStartReportMargin of the source's clock wait for a later run.
  std::this_thread::sleep_for(std::chrono::microseconds(kStartReportMargin) + std::chrono::milliseconds(50));
  REQUIRE(h.run_table("t_binary") == 0);
  REQUIRE(h.run_table("t_text") == 0);
  CHECK(h.target("t_binary") == h.source("t_binary"));
  CHECK(h.target("t_text") == h.source("t_text"));

  // A cursor backfill writes the source's values over a spoiled target.
  h.env.target().exec("update raw.t_text set f8 = 0, d = '2000-01-01', iv = '1 second', note = 'spoiled' where id = 3");
  BackfillOptions backfill;
  backfill.pipeline = "p";
  backfill.table = "t_text";
  backfill.from = "2026-11-30T00:00:00Z";
  backfill.to = "2026-11-30T13:00:00Z";
  REQUIRE(h.run(run_backfill, backfill) == 0);
  CHECK(h.target("t_text") == h.source("t_text"));

  // verify compares both sides and finds them equal.
  VerifyOptions verify;
  verify.pipeline = "p";
  verify.table = "t_text";
  CHECK(h.run(run_verify, verify) == 0);

  // reconcile deletes a row gone from the source and copies again one the
  // target lost, exactly.
  h.env.source().exec("delete from public.t_text where id = 3");
  h.env.target().exec("delete from raw.t_text where id = 2");
  ReconcileOptions reconcile;
  reconcile.pipeline = "p";
  reconcile.table = "t_text";
  REQUIRE(h.run(run_reconcile, reconcile) == 0);
  CHECK(h.out.str().find("1 rows deleted, 1 missing") != std::string::npos);
  CHECK(h.target("t_text") == h.source("t_text"));
}

TEST_CASE("regression: hostile date style no longer moves a partition's rows or duplicates them on a rerun") {
  Hostile h;
  // The 2026-04-04 partition (d moved a day by nothing here): under "SQL,
  // DMY" its day printed as 04/04 and February's first as 01/02, read back
  // as January's second: the row landed in another partition, and every
  // rerun added another copy.
  BackfillOptions backfill;
  backfill.pipeline = "p";
  backfill.table = "per_day";
  backfill.from = "2026-04-01";
  backfill.to = "2026-04-10";
  REQUIRE(h.run(run_backfill, backfill) == 0);
  backfill.rerun = true;
  REQUIRE(h.run(run_backfill, backfill) == 0);
  const auto direct = PgTestEnv::rows(
      h.env.source(), "select d, count(*), sum(f8), max(iv), max(tstz), string_agg(note, ',') from public.t_text"
                      " where d >= '2026-04-01' and d < '2026-04-10' group by d order by d");
  CHECK(PgTestEnv::rows(h.env.target(), "select * from raw.per_day order by d") == direct);
  CHECK(direct.size() == 1);
  VerifyOptions verify;
  verify.pipeline = "p";
  verify.table = "per_day";
  CHECK(h.run(run_verify, verify) == 0);
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("regression: a source role that row-level security filters loaded part of the table; it fails instead") {
  PgTestEnv env;
  env.source().exec(
      "create table public.t (id int primary key, updated_at timestamptz not null);"
      "insert into public.t select g, now() - interval '1 hour' from generate_series(1, 4) g;"
      "alter table public.t enable row level security;"
      "create policy low_ids on public.t using (id < 3);");
  env.target().exec("create table public.t (id int primary key, updated_at timestamptz not null)");
  testing::SourceRole role(env, "reader");
  env.source().exec("grant select on public.t to " + role.name());
  testing::CommandRunner c;
  // The role cannot see other sessions either: a lookback keeps that from being the refusal.
  c.config_path = env.write_config_files(
      "pipeline: p\nsource: source\ntarget: target\nschedule: \"* * * * *\"\ntables:\n"
      "  - name: t\n    source_table: public.t\n    target_table: public.t\n    key: [id]\n    cursor: updated_at\n"
      "    lookback: 1m\n");
  RunOptions run;
  run.pipeline = "p";
  CHECK(c.run(run_run, run) == 1);
  CHECK(PgTestEnv::rows(env.target(), "select count(*) from public.t")[0] == "0");
  CHECK(PgTestEnv::rows(env.state(), "select error from tidemark.runs")[0].find(
            "query would be affected by row-level security policy for table \"t\"") != std::string::npos);
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("regression: a partition's query read its dates in the source database's time zone, not the pipeline's") {
  // $1 and $2 are dates; compared with a timestamptz they became instants
  // in the session's zone (here the database's Asia/Kolkata), so each
  // partition held the source's days instead of the pipeline's, and
  // verify's --rerun advice changed nothing.
  testing::CommandRunner c;
  PgTestEnv env;
  env.source().exec(
      "create table public.payment (id int primary key, amount numeric not null, paid_at timestamptz not null);"
      "insert into public.payment values (1, 10, '2026-04-03 20:00+00'), (2, 5, '2026-04-03 23:59:59.999999+00'),"
      " (3, 1, '2026-04-04 00:00+00')");
  env.source().exec(alter_database({{"timezone", "Asia/Kolkata"}}));
  env.target().exec(alter_database({{"timezone", "Pacific/Chatham"}}) +
                    "; create table public.daily (day date primary key, payments bigint, amount numeric)");
  c.config_path = env.write_config_files(R"(pipeline: p
source: source
target: target
schedule: "5 0 * * *"
tables:
  - name: daily
    mode: partition
    partition: { column: day, unit: day }
    query: |
      select paid_at::date as day, count(*) as payments, sum(amount) as amount
      from public.payment where paid_at >= $1 and paid_at < $2 group by 1
    target_table: public.daily
)");
  BackfillOptions backfill;
  backfill.pipeline = "p";
  backfill.table = "daily";
  backfill.from = "2026-04-01";
  backfill.to = "2026-04-10";
  REQUIRE(c.run(run_backfill, backfill) == 0);
  CHECK(PgTestEnv::rows(env.target(), "select * from public.daily order by day") ==
        std::vector<std::string>{"2026-04-03|2|15", "2026-04-04|1|1"});
  VerifyOptions verify;
  verify.pipeline = "p";
  verify.table = "daily";
  CHECK(c.run(run_verify, verify) == 0);
}

}  // namespace tidemark
