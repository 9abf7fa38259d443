// A snapshot table's first load in page ranges against a real PostgreSQL:
// every range read in one held snapshot, each committed by itself; a load
// that failed part way resumes with only the ranges left, then one diff
// makes the target exactly the source, even when VACUUM FULL moved the
// rows between the two runs; a TOAST-heavy table is cut by its bytes; a
// view, a partitioned table and a role with a column grant load in one
// stream.
#include <doctest/doctest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <regex>
#include <stdexcept>
#include <thread>

#include "daemon/commands/commands.h"
#include "daemon/pg/data/pg_run_ports.h"
#include "daemon/pg/data/pipeline_connections.h"
#include "daemon/pg/data/table_snapshot.h"
#include "daemon/pg/libpq/pg_connection.h"
#include "daemon/pg/state/state_schema.h"
#include "pg_test_env.h"

namespace tidemark {
namespace {

using testing::PgTestEnv;

// 64kB ranges: the ledger's 20,000 rows make about twenty. One worker
// unless told: the run's own sessions commit the ranges in order.
std::string ranged_pipeline(const std::string& source_table, const std::string& extra = "", int workers = 1) {
  return "pipeline: shop\nsource: source\ntarget: target\nschedule: \"* * * * *\"\ntables:\n"
         "  - name: ledger\n    mode: snapshot\n    source_table: " +
         source_table + "\n    target_table: raw.ledger\n    key: [id]\n    ranges: { above: 0B, size: 64kB, workers: " +
         std::to_string(workers) + " }\n" + extra;
}

const char* const kLedger = "(id bigint primary key, account int not null, amount numeric(12,2), note text)";

struct RangedFixture {
  PgTestEnv env;
  std::unique_ptr<testing::TableRuns> runs;

  // `create_target`: the first range's transaction makes the target.
  explicit RangedFixture(const std::string& source_table = "public.ledger", bool state_in_target = true,
                         bool create_target = false, int workers = 1)
      : env(state_in_target) {
    env.source().exec(std::string("create table public.ledger ") + kLedger +
                      "; insert into public.ledger select i, i % 97, i * 1.25, 'note ' || i"
                      " from generate_series(1, 20000) i; analyze public.ledger");
    env.target().exec(std::string("create schema raw") +
                      (create_target ? "" : std::string("; create table raw.ledger ") + kLedger));
    runs = std::make_unique<testing::TableRuns>(
        env, env.config(ranged_pipeline(source_table, create_target ? "    create_target: true\n" : "", workers)));
  }

  JobEnded run(std::function<void(ChunkStep)> hook = nullptr) {
    return runs->run("shop", "ledger", RunTrigger::Manual, std::move(hook));
  }
  std::vector<std::string> source_rows() {
    return PgTestEnv::rows(env.source(), "select * from public.ledger order by id");
  }
  std::vector<std::string> target_rows() {
    return PgTestEnv::rows(env.target(), "select * from raw.ledger order by id");
  }
  // "done of all" of the ranges the state holds.
  std::string ranges() {
    return PgTestEnv::rows(env.state(), "select count(done_by) || ' of ' || count(*) from tidemark.load_ranges")[0];
  }
  std::string watermarks() { return PgTestEnv::rows(env.state(), "select count(*) from tidemark.watermarks")[0]; }
};

// A hook that fails the step after `commits` units of work committed.
std::function<void(ChunkStep)> crash_after(int commits) {
  auto seen = std::make_shared<int>(0);
  return [seen, commits](ChunkStep step) {
    if (step == ChunkStep::AfterCommit && ++*seen == commits) throw std::runtime_error("crash after a commit");
  };
}

}  // namespace

TEST_CASE("ranged first load: every range in one snapshot, each committed by itself, the last moving the watermark") {
  for (const bool create_target : {false, true}) {
  CAPTURE(create_target);
  RangedFixture f("public.ledger", true, create_target);
  const std::vector<std::string> before = f.source_rows();
  // Rows changed while the ranges load belong to the next snapshot, not this one.
  int commits = 0;
  std::string midway;
  const JobEnded r = f.run([&](ChunkStep step) {
    if (step != ChunkStep::AfterCommit || ++commits != 3) return;
    midway = f.ranges();
    // Rows of ranges read and not read yet change: a range read in a
    // snapshot of its own (the held one lost, say to the COMMIT of a
    // statement before it) would take them in.
    f.env.source().exec(
        "delete from public.ledger where id in (3, 4, 5);"
        "update public.ledger set amount = -1 where id in (2, 19990);"
        "delete from public.ledger where id = 19991;"
        "insert into public.ledger values (20001, 1, 1, 'new')");
  });
  REQUIRE(r.summary.status == RunStatus::Success);
  const int ranges = static_cast<int>(r.summary.chunks);
  CHECK(ranges >= 10);
  CHECK(midway == "3 of " + std::to_string(ranges));
  CHECK(r.summary.snapshot_path == "first load in " + std::to_string(ranges) + " ranges");
  CHECK(r.summary.rows_read == 20000);
  CHECK(f.target_rows() == before);
  CHECK(f.ranges() == "0 of 0");  // the load is whole: its ranges are forgotten
  CHECK(PgTestEnv::rows(f.env.state(), "select count(*) from tidemark.snapshot_horizons")[0] == "1");

  // The next run is a snapshot run's: it finds what changed since.
  const JobEnded next = f.run();
  REQUIRE(next.summary.status == RunStatus::Success);
  CHECK(next.summary.chunks == 1);
  CHECK(f.target_rows() == f.source_rows());
  }
}

TEST_CASE("ranged first load: killed half way, it resumes with the ranges left and ends exact, though VACUUM FULL "
          "moved the rows") {
  for (const bool state_in_target : {true, false}) {
    CAPTURE(state_in_target);
    RangedFixture f("public.ledger", state_in_target);
    const JobEnded killed = f.run(crash_after(8));
    REQUIRE(killed.summary.status == RunStatus::Failed);
    const std::vector<std::string> ranges = PgTestEnv::rows(
        f.env.state(), "select count(*) filter (where done_by is not null), count(*) from tidemark.load_ranges");
    REQUIRE(ranges.size() == 1);
    const int all = std::stoi(ranges[0].substr(ranges[0].find('|') + 1));
    CHECK(f.ranges() == "8 of " + std::to_string(all));
    CHECK(f.watermarks() == "0");
    CHECK(PgTestEnv::rows(f.env.target(), "select count(*) from raw.ledger")[0] != "0");
    // status says where the load will resume, in text and JSON.
    testing::CommandRunner status;
    status.config_path = f.env.write_config_files(ranged_pipeline("public.ledger"));
    REQUIRE(status.run(run_status, StatusOptions{}) == 0);
    CHECK(status.out.str().find("shop.ledger: first load in ranges, 8 of " + std::to_string(all) +
                                " committed; the next run loads the rest, then diffs the whole table") !=
          std::string::npos);
    status.out.str("");
    StatusOptions json;
    json.json = true;
    REQUIRE(status.run(run_status, json) == 0);
    const auto rows = nlohmann::json::parse(status.out.str());
    CHECK(rows.at(0)["first_load_ranges"] == nlohmann::json{{"done", 8}, {"of", all}});

    // Between the runs: rows changed in ranges done and left, rows deleted
    // from the first pages, and VACUUM FULL, which moves the later pages'
    // rows down into ranges already done, where the ranges left miss them.
    f.env.source().exec(
        "update public.ledger set note = 'changed' where id in (6, 10000, 19999);"
        "delete from public.ledger where id <= 6000 and id % 3 <> 0;"
        "insert into public.ledger values (30000, 1, 1, 'new')");
    f.env.source().exec("vacuum full public.ledger");
    const JobEnded resumed = f.run();
    REQUIRE(resumed.summary.status == RunStatus::Success);
    const int left = all - 8;
    // The rows VACUUM FULL moved into the ranges done are what the diff
    // finds missing; the rows deleted, gone. (The changed rows' new
    // tuples lie wherever VACUUM FULL put them: in a range loaded again,
    // or found by the diff.)
    CHECK_MESSAGE(std::regex_match(resumed.summary.snapshot_path,
                                   std::regex("first load resumed, " + std::to_string(left) + " of " +
                                              std::to_string(all) +
                                              " ranges loaded again, then diff: [0-9]+ changed, [1-9][0-9]* missing, "
                                              "4000 gone")),
                  resumed.summary.snapshot_path);
    CHECK(resumed.summary.chunks == left + 1);
    CHECK(f.target_rows() == f.source_rows());
    CHECK(f.ranges() == "0 of 0");
    CHECK(f.watermarks() == "1");
  }
}

TEST_CASE("ranged first load: a failed range leaves its target rows out, and the one after a crash before the "
          "record is loaded again") {
  RangedFixture f;
  // The fifth range writes its rows, then fails before its record: none
  // of its rows stay, and the state says four are done.
  int writes = 0;
  const JobEnded failed = f.run([&](ChunkStep step) {
    if (step == ChunkStep::AfterTargetWrite && ++writes == 5) throw std::runtime_error("crash before the record");
  });
  REQUIRE(failed.summary.status == RunStatus::Failed);
  CHECK(f.ranges().rfind("4 of ", 0) == 0);
  // The target holds the rows of the four ranges done, and none of the fifth's.
  const std::string fifth = PgTestEnv::rows(f.env.state(), "select first_page from tidemark.load_ranges where range_no = 4")[0];
  CHECK(PgTestEnv::rows(f.env.target(), "select count(*) from raw.ledger") ==
        PgTestEnv::rows(f.env.source(), "select count(*) from public.ledger where ctid < '(" + fifth + ",0)'::tid"));
  const JobEnded resumed = f.run();
  REQUIRE(resumed.summary.status == RunStatus::Success);
  CHECK(resumed.summary.snapshot_path.find(", then unchanged") != std::string::npos);
  CHECK(f.target_rows() == f.source_rows());
}

TEST_CASE("ranged first load: a TOAST-heavy table keyed by text is cut by its bytes, not its heap pages") {
  PgTestEnv env;
  // Twenty rows of 2 MB values that do not compress, beside a 2 kB value
  // kept in the heap: a few rows a page, about 40 MB in all. Page ranges
  // need no integer key.
  const std::string shape = "(id text primary key, pad text, doc text)";
  env.source().exec("create table public.docs " + shape +
                    "; alter table public.docs alter column pad set storage plain;"
                    " insert into public.docs select 'doc ' || i, repeat('p', 2000),"
                    " (select string_agg(md5(i::text || '.' || j::text), '') from generate_series(1, 65536) j)"
                    " from generate_series(1, 20) i");
  env.target().exec("create table public.docs " + shape);
  testing::TableRuns runs(
      env, env.config("pipeline: shop\nsource: source\ntarget: target\nschedule: \"* * * * *\"\ntables:\n"
                      "  - name: docs\n    mode: snapshot\n    source_table: public.docs\n"
                      "    target_table: public.docs\n    key: [id]\n    ranges: { above: 0B, size: 8MB }\n"));
  const JobEnded r = runs.run("shop", "docs");
  REQUIRE(r.summary.status == RunStatus::Success);
  // Heap pages alone would make one range; 40 MB in 8 MB ranges make about five.
  CHECK(r.summary.chunks >= 4);
  CHECK(r.summary.chunks <= 8);
  const std::string digest = "select string_agg(id || ':' || md5(pad || doc), ',' order by id) from public.docs";
  CHECK(PgTestEnv::rows(env.target(), digest) == PgTestEnv::rows(env.source(), digest));
}

TEST_CASE("ranged first load: what loads in one stream instead, exactly") {
  struct Case {
    const char* name;
    std::string prepare;  // on the source, after the ledger is made
    std::string source_table;
    bool column_grant = false;
  };
  const std::vector<Case> cases = {
      {"a view", "create view public.ledger_view as select * from public.ledger", "public.ledger_view"},
      {"a partitioned table, whose partitions repeat each other's CTIDs",
       "create table public.ledger_parts (id bigint primary key, account int not null, amount numeric(12,2), note text)"
       " partition by range (id);"
       "create table public.ledger_low partition of public.ledger_parts for values from (minvalue) to (10001);"
       "create table public.ledger_high partition of public.ledger_parts for values from (10001) to (maxvalue);"
       "insert into public.ledger_parts select * from public.ledger",
       "public.ledger_parts"},
      {"a role granted the columns, which may not LOCK the table", "", "public.ledger", true},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    PgTestEnv env;
    env.source().exec(std::string("create table public.ledger ") + kLedger +
                      "; insert into public.ledger select i, i % 97, i * 1.25, 'note ' || i"
                      " from generate_series(1, 20000) i");
    if (!c.prepare.empty()) env.source().exec(c.prepare);
    env.target().exec(std::string("create schema raw; create table raw.ledger ") + kLedger);
    std::optional<testing::SourceRole> role;
    if (c.column_grant) {
      role.emplace(env, "ranged");
      env.source().exec("grant select (id, account, amount, note) on public.ledger to " + role->name());
    }
    testing::TableRuns runs(env, env.config(ranged_pipeline(c.source_table)));
    const JobEnded r = runs.run("shop", "ledger");
    REQUIRE(r.summary.status == RunStatus::Success);
    CHECK(r.summary.chunks == 1);
    CHECK(PgTestEnv::rows(env.state(), "select count(*) from tidemark.load_ranges")[0] == "0");
    CHECK(PgTestEnv::rows(env.target(), "select * from raw.ledger order by id") ==
          PgTestEnv::rows(env.source(), "select * from public.ledger order by id"));
  }
}

TEST_CASE("ranged first load: a role granted the table, not a superuser, loads in ranges, with helpers") {
  PgTestEnv env;
  env.source().exec(std::string("create table public.ledger ") + kLedger +
                    "; insert into public.ledger select i, i % 97, i * 1.25, 'note ' || i"
                    " from generate_series(1, 20000) i");
  env.target().exec(std::string("create schema raw; create table raw.ledger ") + kLedger);
  testing::SourceRole role(env, "ranged_reader");
  env.source().exec("grant select on public.ledger to " + role.name());
  testing::TableRuns runs(env, env.config(ranged_pipeline("public.ledger", "", 3)));
  const JobEnded r = runs.run("shop", "ledger");
  REQUIRE(r.summary.status == RunStatus::Success);
  CHECK(r.summary.chunks > 1);
  CHECK(PgTestEnv::rows(env.target(), "select count(*) from raw.ledger")[0] == "20000");
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("ranged first load: the session holding the snapshot ended fails the run clearly, and the next resumes") {
  RangedFixture f;
  int commits = 0;
  const JobEnded killed = f.run([&](ChunkStep step) {
    if (step != ChunkStep::AfterCommit || ++commits != 3) return;
    // tidemark's one source session idle in its transaction: the held snapshot's.
    const std::vector<std::string> ended = PgTestEnv::rows(
        f.env.source(),
        "select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database()"
        " and state = 'idle in transaction' and application_name = 'tidemark (read-only source)'");
    CHECK(ended == std::vector<std::string>{"t"});
  });
  REQUIRE(killed.summary.status == RunStatus::Failed);
  CHECK(killed.summary.error_kind == ErrorKind::Transient);
  CHECK(killed.summary.error.rfind("source: COPY", 0) == 0);
  CHECK(killed.summary.error.find("terminating connection due to administrator command") != std::string::npos);
  CHECK(f.ranges().rfind("3 of ", 0) == 0);
  CHECK(f.watermarks() == "0");
  const JobEnded resumed = f.run();
  REQUIRE(resumed.summary.status == RunStatus::Success);
  CHECK(f.target_rows() == f.source_rows());
  CHECK(f.ranges() == "0 of 0");
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("ranged first load: a row written into the target during the load fails it, transient, and the next "
          "resumes") {
  RangedFixture f;
  int commits = 0;
  const JobEnded failed = f.run([&](ChunkStep step) {
    if (step != ChunkStep::AfterCommit || ++commits != 1) return;
    // A key of the last range, written by hand before that range is copied.
    f.env.target().exec("insert into raw.ledger values (19999, 0, 0, 'by hand')");
  });
  REQUIRE(failed.summary.status == RunStatus::Failed);
  CHECK(failed.summary.error_kind == ErrorKind::Transient);
  CHECK(failed.summary.error.find("a row was written into the target during its first load") != std::string::npos);
  const JobEnded resumed = f.run();
  REQUIRE(resumed.summary.status == RunStatus::Success);
  CHECK(f.target_rows() == f.source_rows());  // the row by hand has the source's values
}

}  // namespace tidemark

namespace tidemark {

namespace {

// Called in the run's own commit hook: after its `own`th commit, waits
// until the ranges marked done outnumber the run's own, that is, until a
// helper (who opens sessions of its own first) committed one. False after
// 30 s.
bool helper_committed(RangedFixture& f, int own) {
  return testing::eventually(std::chrono::seconds(30), [&] {
    return std::stoi(PgTestEnv::rows(f.env.state(), "select count(done_by) from tidemark.load_ranges")[0]) > own;
  });
}

}  // namespace

TEST_CASE("ranged first load with helpers: ranges committed on several sessions read one snapshot while rows change") {
  for (const bool state_in_target : {true, false}) {
    for (const bool create_target : {false, true}) {
      CAPTURE(state_in_target);
      CAPTURE(create_target);
      RangedFixture f("public.ledger", state_in_target, create_target, /*workers=*/3);
      const std::vector<std::string> before = f.source_rows();
      int commits = 0;
      bool helped = false;
      const JobEnded r = f.run([&](ChunkStep step) {
        if (step != ChunkStep::AfterCommit) return;
        ++commits;
        if (commits == 1) {
          // After the first range, which the run commits alone, before its
          // helpers join its snapshot: they must not see these.
          f.env.source().exec(
              "delete from public.ledger where id in (3, 4, 5, 9000);"
              "update public.ledger set amount = -1 where id in (2, 10000, 19990);"
              "insert into public.ledger values (20001, 1, 1, 'new')");
        } else if (commits == 2) {
          helped = helper_committed(f, commits);
        }
      });
      REQUIRE(r.summary.status == RunStatus::Success);
      CHECK(helped);
      const int ranges = static_cast<int>(r.summary.chunks);
      CHECK(ranges >= 10);
      CHECK(commits < ranges);  // the rest were the helpers'
      CHECK(r.summary.snapshot_path == "first load in " + std::to_string(ranges) + " ranges");
      CHECK(r.summary.rows_read == 20000);
      CHECK(f.target_rows() == before);
      CHECK(f.ranges() == "0 of 0");
      CHECK(f.watermarks() == "1");
      const JobEnded next = f.run();
      REQUIRE(next.summary.status == RunStatus::Success);
      CHECK(f.target_rows() == f.source_rows());
    }
  }
}

TEST_CASE("ranged first load with helpers: the session holding the snapshot ended fails the run, and the next "
          "resumes exact") {
  for (const bool state_in_target : {true, false}) {
    CAPTURE(state_in_target);
    RangedFixture f("public.ledger", state_in_target, false, /*workers=*/3);
    int commits = 0;
    bool helped = false;
    const JobEnded killed = f.run([&](ChunkStep step) {
      if (step != ChunkStep::AfterCommit || ++commits != 2) return;
      helped = helper_committed(f, commits);
      // The run's own source session began its transaction first; its
      // helpers joined the snapshot it exported.
      const std::vector<std::string> ended = PgTestEnv::rows(
          f.env.source(),
          "select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database()"
          " and application_name = 'tidemark (read-only source)' and xact_start is not null"
          " order by xact_start limit 1");
      CHECK(ended == std::vector<std::string>{"t"});
    });
    CHECK(helped);
    REQUIRE(killed.summary.status == RunStatus::Failed);
    CHECK(killed.summary.error_kind == ErrorKind::Transient);
    CHECK(killed.summary.error.find("terminating connection due to administrator command") != std::string::npos);
    CHECK(f.watermarks() == "0");
    f.env.source().exec("update public.ledger set amount = amount + 1 where id % 7 = 0");
    const JobEnded resumed = f.run();
    REQUIRE(resumed.summary.status == RunStatus::Success);
    CHECK(resumed.summary.snapshot_path.rfind("first load resumed, ", 0) == 0);
    CHECK(f.target_rows() == f.source_rows());
    CHECK(f.ranges() == "0 of 0");
  }
}

TEST_CASE("regression: a helper queued behind a rewrite or a REINDEX waiting for the run's locks hung the load") {
  // After the first range, a session asks for a lock the run's
  // transaction holds a weaker one of (the table's, for a rewrite or
  // TRUNCATE; an index's, for a REINDEX): it waits for the run, and every
  // lock asked for after it waits behind it, a helper's too.
  for (const char* statement : {"lock table public.ledger in access exclusive mode", "reindex index public.ledger_pkey"}) {
    CAPTURE(statement);
    RangedFixture f("public.ledger", true, false, /*workers=*/3);
    std::thread rewrite;
    bool done = false;
    std::string why;
    int commits = 0;
    const JobEnded r = f.run([&](ChunkStep step) {
      if (step != ChunkStep::AfterCommit || ++commits != 1) return;
      rewrite = std::thread([&] {
        try {
          PgConnection admin(f.env.dsn("source"), "rewrite");
          admin.exec(std::string("set lock_timeout = '20s'; ") + statement);
          done = true;
        } catch (const std::exception& e) {
          why = e.what();
        }
      });
      CHECK(testing::eventually(std::chrono::seconds(10), [&] {
        return PgTestEnv::rows(f.env.source(),
                               "select count(*) from pg_locks where not granted and relation in"
                               " ('public.ledger'::regclass, 'public.ledger_pkey'::regclass) and database ="
                               " (select oid from pg_database where datname = current_database())")[0] != "0";
      }));
    });
    rewrite.join();
    REQUIRE(r.summary.status == RunStatus::Success);
    // No helper could take the locks: the run read every range itself,
    // and the statement went through once the run's transaction ended.
    CHECK(commits == r.summary.chunks);
    CHECK(done);
    CHECK(why == "");
    CHECK(f.target_rows() == f.source_rows());
  }
}

TEST_CASE("range helper: its record holds while the run's session holds the lock and its row runs, and its rows "
          "keep a later run waiting") {
  for (const bool state_in_target : {true, false}) {
    CAPTURE(state_in_target);
    RangedFixture f("public.ledger", state_in_target, false, /*workers=*/3);
    migrate_state_schema(f.env.state());
    const std::shared_ptr<const Config> config = f.env.config(ranged_pipeline("public.ledger", "", 3));
    const PipelineConfig& pipeline = *config->find_pipeline("shop");
    const TableConfig& table = *pipeline.find_table("ledger");
    const TableKey key{"shop", "ledger"};
    const RunLock lock{key, std::nullopt};
    CancelToken cancel;

    // The run: its lock, its row, its plan, and its snapshot held.
    PipelineConnections run;
    run.open_state(*config);
    run.open_data(*config, pipeline);
    PgStateStore run_state(*run.state);
    REQUIRE(run_state.lock(lock, false).value());
    const auto opened = run_state.open_run(RunStart{key, RunTrigger::Manual, std::nullopt});
    REQUIRE(opened.ok());
    REQUIRE(run_state.plan_load_ranges(key, opened->run, {PageRange{0, 10}, PageRange{10, 20},
                                                          PageRange{20, std::nullopt}}).ok());
    run.source->exec("begin isolation level repeatable read read only");
    const std::string snapshot = export_snapshot(*run.source);

    // A helper writes a range on sessions of its own.
    PipelineConnections helper;
    helper.open_state(*config);
    helper.open_data(*config, pipeline);
    PgRunPorts ports(helper, cancel);
    ports.state.help(lock, run_state.holder_of(lock));
    ports.target.help();
    REQUIRE(ports.target.check(table).ok());
    const auto source = ports.source.inspect(table);
    REQUIRE(source.ok());
    join_snapshot(*helper.source, snapshot);
    StepRecord record;
    record.lock = lock;
    record.run = opened->run;
    const auto write = [&](int range, const PageRange& pages) {
      auto work = ports.target.begin(lock);
      REQUIRE(work->write_range(table, *source, pages, false).ok());
      record.range_done = range;
      return work;
    };
    auto work = write(1, PageRange{10, 20});

    // Until it commits, a later run of the table waits for it.
    PipelineConnections later;
    later.open_state(*config);
    later.open_data(*config, pipeline);
    PgStateStore later_state(*later.state);
    PgSource later_source(*later.source);
    PgTarget later_target(later.target(), later_source, &later_state, cancel);
    later.target().exec("set lock_timeout = '200ms'");
    const Status waited = later_target.await_range_helpers(lock);
    REQUIRE_FALSE(waited.ok());
    CHECK(waited.error().find("lock timeout") != std::string::npos);

    const auto recorded = work->record(record);
    REQUIRE(recorded.ok());
    CHECK(recorded->lock_held);
    CHECK(recorded->written);
    REQUIRE(work->commit().ok());
    CHECK(later_target.await_range_helpers(lock).ok());
    CHECK(f.ranges() == "1 of 3");

    // The run's row no longer running (a later holder found it so, as a
    // pooler's reused server process would let it): refused.
    f.env.state().exec("update tidemark.runs set status = 'failed' where run_id = " + std::to_string(opened->run));
    auto stale = write(2, PageRange{20, std::nullopt});
    const auto refused = stale->record(record);
    REQUIRE(refused.ok());
    CHECK_FALSE(refused->lock_held);
    CHECK_FALSE(refused->written);
    stale.reset();
    f.env.state().exec("update tidemark.runs set status = 'running' where run_id = " + std::to_string(opened->run));

    // Once the run's session lets the lock go: refused too.
    run_state.unlock(lock);
    auto late = write(0, PageRange{0, 10});
    const auto unlocked = late->record(record);
    REQUIRE(unlocked.ok());
    CHECK_FALSE(unlocked->lock_held);
    CHECK_FALSE(unlocked->written);
    late.reset();
    CHECK(f.ranges() == "1 of 3");
    CHECK(PgTestEnv::rows(f.env.target(), "select count(*) from raw.ledger") ==
          PgTestEnv::rows(f.env.source(), "select count(*) from public.ledger where ctid >= '(10,0)' and "
                                          "ctid < '(20,0)'"));
  }
}

}  // namespace tidemark
