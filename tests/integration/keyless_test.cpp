// Tables without a key against a real PostgreSQL: mode append inserts
// each row once, with its watermark in one transaction, whatever fails
// between; a snapshot table without a key ends equal to its source as a
// multiset (identical rows counted) and writes nothing when nothing
// changed; create_target makes their targets without a primary key.
#include <doctest/doctest.h>

#include <stdexcept>

#include "daemon/commands/commands.h"
#include "daemon/pg/libpq/pg_connection.h"
#include "pg_test_env.h"

namespace tidemark {
namespace {

using testing::PgTestEnv;
using Rows = std::vector<std::string>;

const char* const kKeylessPipeline = R"(pipeline: logs
source: source
target: target
schedule: "* * * * *"
tables:
  - name: events
    mode: append
    source_table: public.events
    target_table: raw.events
    cursor: id
    create_target: true
  - name: readings
    mode: snapshot
    source_table: public.readings
    target_table: raw.readings
    create_target: true
)";

// A multiset's rows in one order, each with how often it occurs.
const char* const kCounted = "select t::text, count(*) from %s t group by t::text order by 1";

std::string counted(const std::string& table) {
  std::string query = kCounted;
  query.replace(query.find("%s"), 2, table);
  return query;
}

struct Keyless {
  PgTestEnv env;
  testing::TableRuns runs;

  Keyless() : runs(with_tables(env), env.config(kKeylessPipeline)) {}

  static PgTestEnv& with_tables(PgTestEnv& env) {
    env.source().exec(
        "create table public.events (id bigint generated always as identity, kind text, payload jsonb,"
        " at timestamptz not null default now());"
        "insert into public.events (kind, payload) select 'k' || (g % 3), jsonb_build_object('g', g)"
        " from generate_series(1, 300) g;"
        // Identical rows on purpose: a multiset, not a set.
        "create table public.readings (sensor int, value numeric(6,2), note text);"
        "insert into public.readings select g % 5, (g % 7) * 1.5, case when g % 2 = 0 then 'even' end"
        " from generate_series(1, 200) g");
    return env;
  }

  JobEnded run(const std::string& table, std::function<void(ChunkStep)> hook = nullptr) {
    return runs.run("logs", table, RunTrigger::Manual, std::move(hook));
  }
  Rows source(const std::string& table) { return PgTestEnv::rows(env.source(), counted("public." + table)); }
  Rows target(const std::string& table) { return PgTestEnv::rows(env.target(), counted("raw." + table)); }
  std::string watermark(const std::string& table) {
    const Rows found =
        PgTestEnv::rows(env.state(), "select value from tidemark.watermarks where table_name = '" + table + "'");
    return found.empty() ? std::string() : found[0];
  }
  // Each target row's tuple and the transaction that wrote it.
  Rows tuples(const std::string& table) {
    return PgTestEnv::rows(env.target(), "select ctid, xmin from raw." + table + " order by ctid");
  }
  // A run of `table` that finds nothing new: it succeeds, writes nothing
  // and leaves every target tuple where it was.
  void check_idle_run(const std::string& table) {
    const Rows before = tuples(table);
    const JobEnded idle = run(table);
    REQUIRE(idle.summary.status == RunStatus::Success);
    CHECK(idle.summary.rows_written == 0);
    CHECK(tuples(table) == before);
  }
};

// `tidemark verify logs --table events [--keys N]` on a Keyless's files,
// each call's output alone in `out`.
struct Verifier : testing::CommandRunner {
  VerifyOptions options;
  Verifier(Keyless& f, std::size_t keys) {
    config_path = f.env.write_config_files(kKeylessPipeline);
    options.pipeline = "logs";
    options.table = "events";
    options.keys = keys;
  }
  int verify() {
    out.str("");
    return run(run_verify, options);
  }
};

}  // namespace

TEST_CASE("append: each run inserts the new rows once; its target has no primary key") {
  Keyless f;
  const JobEnded first = f.run("events");
  REQUIRE_MESSAGE(first.summary.status == RunStatus::Success, first.summary.error);
  CHECK(first.summary.rows_written == 300);
  CHECK(f.target("events") == f.source("events"));
  CHECK(f.watermark("events") == "301");
  CHECK(PgTestEnv::rows(f.env.target(), "select count(*) from pg_index where indrelid = 'raw.events'::regclass") ==
        Rows{"0"});

  f.env.source().exec("insert into public.events (kind) select 'late' from generate_series(1, 25)");
  const JobEnded second = f.run("events");
  REQUIRE(second.summary.status == RunStatus::Success);
  CHECK(second.summary.rows_written == 25);
  CHECK(f.target("events") == f.source("events"));

  f.check_idle_run("events");
}

TEST_CASE("regression: a renamed append table refuses a target that already holds rows, until given initial:") {
  Keyless f;
  REQUIRE(f.run("events").summary.status == RunStatus::Success);
  std::string renamed = kKeylessPipeline;
  renamed.replace(renamed.find("name: events"), 12, "name: events_renamed");
  testing::TableRuns again(f.env, f.env.config(renamed));
  const JobEnded refused = again.run("logs", "events_renamed");
  CHECK(refused.summary.status == RunStatus::Failed);
  CHECK(refused.summary.error.find("target table raw.events already holds rows") != std::string::npos);
  CHECK(f.target("events") == f.source("events"));  // nothing inserted twice

  renamed.replace(renamed.find("cursor: id\n"), 11, "cursor: id\n    initial: \"301\"\n");
  f.env.source().exec("insert into public.events (kind) values ('after')");
  testing::TableRuns resumed(f.env, f.env.config(renamed));
  const JobEnded r = resumed.run("logs", "events_renamed");
  REQUIRE_MESSAGE(r.summary.status == RunStatus::Success, r.summary.error);
  CHECK(r.summary.rows_written == 1);
  CHECK(f.target("events") == f.source("events"));
}

TEST_CASE("append: a failure at any step inserts nothing twice and loses nothing") {
  for (ChunkStep crash : {ChunkStep::BeforeTargetWrite, ChunkStep::AfterTargetWrite, ChunkStep::AfterCommit}) {
    INFO("crash at step " << static_cast<int>(crash));
    Keyless f;
    REQUIRE(f.run("events").summary.status == RunStatus::Success);
    f.env.source().exec("insert into public.events (kind) select 'more' from generate_series(1, 40)");
    const JobEnded crashed = f.run("events", [crash](ChunkStep s) {
      if (s == crash) throw std::runtime_error("injected crash");
    });
    CHECK(crashed.summary.status == RunStatus::Failed);
    CHECK(f.watermark("events") == (crash == ChunkStep::AfterCommit ? "341" : "301"));
    const JobEnded repaired = f.run("events");
    REQUIRE(repaired.summary.status == RunStatus::Success);
    CHECK(f.target("events") == f.source("events"));
  }
}

TEST_CASE("append: an update or a delete on the source is counted as an unseen change") {
  Keyless f;
  REQUIRE(f.run("events").summary.status == RunStatus::Success);
  f.env.source().exec("update public.events set kind = 'edited' where id <= 3; delete from public.events where id = 4");
  // This session's counts reach the statistics when it flushes them.
  f.env.source().exec("select pg_stat_force_next_flush()");
  f.env.source().exec("select 1");
  const JobEnded r = f.run("events");
  REQUIRE(r.summary.status == RunStatus::Success);
  REQUIRE(r.summary.changes);
  CHECK(r.summary.changes->unseen == 4);
}

TEST_CASE("append: verify compares the rows as multisets and names the row values whose counts differ") {
  Keyless f;
  REQUIRE(f.run("events").summary.status == RunStatus::Success);
  Verifier c(f, 5);
  REQUIRE(c.verify() == 0);
  CHECK(c.out.str().find("300          300  ok") != std::string::npos);

  // One row lost, another held twice: the same count, other rows.
  f.env.target().exec("delete from raw.events where id = 7; insert into raw.events select * from raw.events where id = 9");
  CHECK(c.verify() == 1);
  const std::string said = c.out.str();
  CHECK(said.find("DIFFERENT VALUES") != std::string::npos);
  CHECK(said.find("row values: 1 missing from the target, 1 held a different number of times, 0 only in the "
                  "target") != std::string::npos);
  const Rows seven = PgTestEnv::rows(f.env.source(), "select ROW(e.*)::text from public.events e where id = 7");
  const Rows nine = PgTestEnv::rows(f.env.source(), "select ROW(e.*)::text from public.events e where id = 9");
  CHECK(said.find(seven[0] + ": 1 in the source, 0 in the target") != std::string::npos);
  CHECK(said.find(nine[0] + ": 1 in the source, 2 in the target") != std::string::npos);
}

TEST_CASE("regression: verify tells a NULL from the text \\N") {
  Keyless f;
  f.env.source().exec("update public.events set kind = NULL where id = 10");
  REQUIRE(f.run("events").summary.status == RunStatus::Success);
  Verifier c(f, 0);
  REQUIRE(c.verify() == 0);
  f.env.target().exec("update raw.events set kind = E'\\\\N' where id = 10");
  REQUIRE(PgTestEnv::rows(f.env.target(), "select kind from raw.events where id = 10") == Rows{"\\N"});
  CHECK(c.verify() == 1);
  CHECK(c.out.str().find("DIFFERENT VALUES") != std::string::npos);
}

TEST_CASE("snapshot without a key: the target ends equal to the source as a multiset") {
  Keyless f;
  const JobEnded first = f.run("readings");
  REQUIRE_MESSAGE(first.summary.status == RunStatus::Success, first.summary.error);
  CHECK(first.summary.rows_written == 200);
  CHECK(f.target("readings") == f.source("readings"));

  SUBCASE("one of two identical rows deleted, a third copy of another inserted: exact after one run") {
    // (0, 0.00, even) occurs several times; one copy goes. (1, 1.50, NULL) gets one more.
    f.env.source().exec(
        "delete from public.readings where ctid = (select min(ctid) from public.readings"
        " where sensor = 0 and value = 0 and note = 'even');"
        "insert into public.readings values (1, 1.50, NULL), (9, 9.99, 'new')");
    const JobEnded r = f.run("readings");
    REQUIRE_MESSAGE(r.summary.status == RunStatus::Success, r.summary.error);
    CHECK(f.target("readings") == f.source("readings"));
    CHECK(r.summary.snapshot_path.rfind("diff:", 0) == 0);
  }
  SUBCASE("regression: two identical rows changed together into two identical others are seen") {
    // Their hashes cancelled in pairs under bit_xor: the run said unchanged.
    f.env.source().exec("delete from public.readings; insert into public.readings values (1, 1, 'a'), (1, 1, 'a'),"
                        " (2, 2, 'b')");
    REQUIRE(f.run("readings").summary.status == RunStatus::Success);
    REQUIRE(f.target("readings") == f.source("readings"));
    f.env.source().exec("update public.readings set note = 'z', value = 9 where note = 'a'");
    const JobEnded r = f.run("readings");
    REQUIRE(r.summary.status == RunStatus::Success);
    CHECK(r.summary.snapshot_path != "unchanged");
    CHECK(f.target("readings") == f.source("readings"));
  }
  SUBCASE("an unchanged table: the run writes nothing and leaves every tuple where it was") {
    f.check_idle_run("readings");
  }
  SUBCASE("rows changed in place, including NULLs: exact") {
    f.env.source().exec("update public.readings set note = NULL where sensor = 2;"
                        "update public.readings set value = value + 1 where sensor = 3 and note is null");
    const JobEnded r = f.run("readings");
    REQUIRE(r.summary.status == RunStatus::Success);
    CHECK(f.target("readings") == f.source("readings"));
    // Only the values that changed were written: the other sensors' tuples stay.
    CHECK(PgTestEnv::rows(f.env.target(),
                          "select count(*) from raw.readings where sensor in (0, 1, 4) and xmin::text::bigint <> "
                          "(select min(xmin::text::bigint) from raw.readings)") == Rows{"0"});
  }
  SUBCASE("every row changed: exact") {
    f.env.source().exec("update public.readings set value = value + 0.01");
    const JobEnded r = f.run("readings");
    REQUIRE(r.summary.status == RunStatus::Success);
    CHECK(f.target("readings") == f.source("readings"));
  }
  SUBCASE("a source emptied empties the target") {
    f.env.source().exec("delete from public.readings");
    REQUIRE(f.run("readings").summary.status == RunStatus::Success);
    CHECK(f.target("readings").empty());
  }
}

}  // namespace tidemark
