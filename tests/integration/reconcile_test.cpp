// `tidemark reconcile` end to end against a real PostgreSQL: rows deleted
// in the source leave the target (deleted or marked), rows missing below
// the watermark come back and are counted, rows not loaded yet are left
// alone, a dry run changes nothing, a reconcile waits for a load's lock,
// and a table without differences reads no key.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/run/run_ports.h"
#include "daemon/commands/commands.h"
#include "daemon/pg/data/pg_key_side.h"
#include "pg_test_env.h"

namespace tidemark {
namespace {

using testing::PgTestEnv;

const char* const kReconcilePipeline = R"(pipeline: shop
source: source
target: target
schedule: "*/5 * * * *"
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
    deletes: { reconcile: "0 3 * * *" }
  - name: orders_marked
    source_table: public.orders
    target_table: raw.orders_marked
    columns: [order_id, updated_at, amount]
    key: [order_id]
    cursor: updated_at
    deletes: { reconcile: "0 3 * * *", action: mark, mark_column: deleted_at }
  - name: lines
    source_table: public.lines
    target_table: raw.lines
    key: [order_ref, line_no]
    cursor: updated_at
  - name: orders_plain
    source_table: public.orders
    target_table: raw.orders_copy
    key: [order_id]
    cursor: updated_at
)";

struct Reconcile : testing::CommandRunner {
  PgTestEnv env;

  explicit Reconcile(bool state_in_target = true) : env(state_in_target) {
    env.source().exec(
        "create table public.orders (order_id int primary key, updated_at timestamptz not null, amount int);"
        "insert into public.orders select g, timestamptz '2026-01-01' + g * interval '1 minute', g"
        " from generate_series(1, 2000) g;"
        // A composite key whose text part needs quoting in a record and in JSON.
        "create table public.lines (order_ref text, line_no int, updated_at timestamptz not null,"
        " primary key (order_ref, line_no));"
        "insert into public.lines select case g % 4 when 0 then 'a,b' when 1 then 'tab\there' when 2 then"
        " 'quote\"d (x)' else 'ü ' || g end, g, timestamptz '2026-01-01' + g * interval '1 minute'"
        " from generate_series(1, 400) g");
    env.target().exec(
        "create schema raw;"
        "create table raw.orders (order_id int primary key, updated_at timestamptz not null, amount int);"
        "create table raw.orders_copy (order_id int primary key, updated_at timestamptz not null, amount int);"
        "create table raw.orders_marked (order_id int primary key, updated_at timestamptz not null, amount int,"
        " deleted_at timestamptz);"
        "create table raw.lines (order_ref text, line_no int, updated_at timestamptz not null,"
        " primary key (order_ref, line_no))");
    config_path = env.write_config_files(kReconcilePipeline);
    RunOptions run;
    run.pipeline = "shop";
    REQUIRE(CommandRunner::run(run_run, run) == 0);
  }

  int reconcile(const std::string& table = "", bool dry_run = false) {
    out.str("");
    err.str("");
    ReconcileOptions options;
    options.pipeline = "shop";
    options.table = table;
    options.dry_run = dry_run;
    return CommandRunner::run(run_reconcile, options);
  }

  std::string target(const std::string& query) { return PgTestEnv::rows(env.target(), query).at(0); }
  std::string source(const std::string& query) { return PgTestEnv::rows(env.source(), query).at(0); }

  // The report of one reconcile through the runner the command uses.
  ReconcileReport report(const std::string& table, bool dry_run = false) {
    const auto config = env.config(kReconcilePipeline);
    ChunkLogger observer;
    CancelToken cancel;
    JobEndChain ends;
    JobRunner runner(config, observer, sole_owner(), ends);
    ReconcileRequest request;
    request.dry_run = dry_run;
    const PipelineConfig& pipeline = *config->find_pipeline("shop");
    return *runner.run_one(reconcile_job(pipeline, *pipeline.find_table(table), request), cancel).reconcile;
  }
};

}  // namespace

TEST_CASE("20 rows deleted in the source are deleted from the target with action delete, marked with action mark") {
  Reconcile r;
  r.env.source().exec("delete from public.orders where order_id % 100 = 0");  // 20 rows
  REQUIRE(r.reconcile() == 0);
  INFO(r.out.str());
  CHECK(r.out.str().find("shop.orders: reconcile success") != std::string::npos);
  CHECK(r.out.str().find("20 rows deleted, 0 missing") != std::string::npos);
  CHECK(r.target("select count(*) from raw.orders") == "1980");
  CHECK(r.target("select count(*) from raw.orders where order_id % 100 = 0") == "0");
  // Marked, not deleted; only the 20.
  CHECK(r.target("select count(*) from raw.orders_marked") == "2000");
  CHECK(r.target("select count(*) from raw.orders_marked where deleted_at is not null") == "20");
  CHECK(r.target("select count(*) from raw.orders_marked where deleted_at is not null and order_id % 100 <> 0") == "0");
  // Each reconcile is a run row with its counts.
  CHECK(PgTestEnv::rows(r.env.state(),
                        "select table_name, trigger, status, rows_deleted, rows_missing from tidemark.runs"
                        " where trigger = 'reconcile' order by table_name") ==
        std::vector<std::string>{"orders|reconcile|success|20|0", "orders_marked|reconcile|success|20|0"});
  // Again: nothing left to delete; marked rows count as deleted already.
  REQUIRE(r.reconcile() == 0);
  CHECK(r.out.str().find("shop.orders: reconcile success") != std::string::npos);
  CHECK(r.out.str().find("0 rows deleted, 0 missing") != std::string::npos);
  CHECK(r.out.str().find("shop.orders_marked: reconcile success") != std::string::npos);
  CHECK(r.out.str().find("20 rows deleted") == std::string::npos);
  // The marks keep the time they were set.
  CHECK(r.target("select count(distinct deleted_at) from raw.orders_marked") == "1");
}

TEST_CASE("a source emptied by mistake is refused: no target row is deleted or marked") {
  Reconcile r;
  r.env.source().exec("truncate public.orders");
  CHECK(r.reconcile() == 1);
  INFO(r.out.str());
  CHECK(r.out.str().find("holds no row") != std::string::npos);
  CHECK(r.target("select count(*) from raw.orders") == "2000");
  CHECK(r.target("select count(*) from raw.orders_marked where deleted_at is not null") == "0");
}

TEST_CASE("a row removed from the target below the watermark is found, counted missing and copied again") {
  Reconcile r;
  r.env.target().exec("delete from raw.orders where order_id in (7, 1500)");
  REQUIRE(r.reconcile("orders") == 0);
  INFO(r.out.str());
  CHECK(r.out.str().find("0 rows deleted, 2 missing, 0 changed (copied again)") != std::string::npos);
  CHECK(r.out.str().find("missing, e.g.: (1500) (7)") != std::string::npos);
  CHECK(r.target("select count(*) from raw.orders") == "2000");
  CHECK(r.target("select amount from raw.orders where order_id = 1500") == "1500");
  CHECK(PgTestEnv::rows(r.env.state(), "select rows_deleted, rows_missing from tidemark.runs"
                                       " where trigger = 'reconcile'") == std::vector<std::string>{"0|2"});
  // status says so, its last run stays the load's; history shows the reconcile.
  StatusOptions status;
  status.json = true;
  r.out.str("");
  REQUIRE(r.CommandRunner::run(run_status, status) == 0);
  const auto tables = nlohmann::json::parse(r.out.str());
  CHECK(tables[0]["table"] == "orders");
  CHECK(tables[0]["why"]["reason"] == "rows_missing");
  CHECK(tables[0]["why"]["text"].get<std::string>().find("found 2 source rows below the watermark") !=
        std::string::npos);
  CHECK(tables[0]["last_reconcile"]["rows_missing"] == 2);
  CHECK(tables[0]["last_run"]["rows_written"] == 2000);
  CHECK(tables[1]["why"].is_null());
  HistoryOptions history;
  r.out.str("");
  REQUIRE(r.CommandRunner::run(run_history, history) == 0);
  CHECK(r.out.str().find("reconcile success") != std::string::npos);
  CHECK(r.out.str().find("deleted 0, missing 2") != std::string::npos);
  // The claim holds again, and status stops saying otherwise.
  REQUIRE(r.reconcile("orders") == 0);
  CHECK(r.out.str().find("0 rows deleted, 0 missing") != std::string::npos);
  r.out.str("");
  REQUIRE(r.CommandRunner::run(run_status, status) == 0);
  CHECK(nlohmann::json::parse(r.out.str())[0]["why"].is_null());
}

TEST_CASE("rows changed below the watermark without their cursor moving are found by their hash and copied again") {
  Reconcile r;
  // What an application does behind an application-stamped cursor: an
  // update that forgets updated_at, one that sets NULL, one that changes
  // only the scale of a value; and a target row edited by hand.
  r.env.source().exec("update public.orders set amount = amount + 1 where order_id in (11, 1200);"
                      "update public.orders set amount = null where order_id = 13");
  r.env.target().exec("update raw.orders set amount = -1 where order_id = 1999");
  REQUIRE(r.reconcile("orders", /*dry_run=*/true) == 0);
  CHECK(r.out.str().find("0 rows to delete, 0 missing, 4 changed") != std::string::npos);
  CHECK(r.out.str().find("changed, e.g.:") != std::string::npos);
  CHECK(r.target("select amount from raw.orders where order_id = 11") == "11");
  REQUIRE(r.reconcile("orders") == 0);
  INFO(r.out.str());
  CHECK(r.out.str().find("0 rows deleted, 0 missing, 4 changed (copied again)") != std::string::npos);
  CHECK(r.target("select amount from raw.orders where order_id = 11") == "12");
  CHECK(r.target("select coalesce(amount::text, 'null') from raw.orders where order_id = 13") == "null");
  CHECK(r.target("select amount from raw.orders where order_id = 1999") == "1999");
  CHECK(r.target("select md5(string_agg(o::text, ',' order by order_id)) from raw.orders o") ==
        r.source("select md5(string_agg(o::text, ',' order by order_id)) from public.orders o"));
  CHECK(PgTestEnv::rows(r.env.state(), "select rows_deleted, rows_missing, rows_changed, rows_written"
                                       " from tidemark.runs where trigger = 'reconcile'") ==
        std::vector<std::string>{"0|0|4|4"});
  StatusOptions status;
  status.json = true;
  r.out.str("");
  REQUIRE(r.CommandRunner::run(run_status, status) == 0);
  CHECK(nlohmann::json::parse(r.out.str())[0]["last_reconcile"]["rows_changed"] == 4);
  HistoryOptions history;
  r.out.str("");
  REQUIRE(r.CommandRunner::run(run_history, history) == 0);
  CHECK(r.out.str().find("deleted 0, missing 0, changed 4") != std::string::npos);
  // Equal again: the next reconcile reads no key.
  const ReconcileReport again = r.report("orders");
  CHECK(again.counts.changed == 0);
  CHECK(again.differing_buckets == 0);
}

TEST_CASE("numeric scale, -0, NULL and text case are changes, though `=` calls them equal") {
  Reconcile r;
  r.env.source().exec("alter table public.orders add column note text, add column price numeric, add column f float8");
  r.env.target().exec("alter table raw.orders add column note text, add column price numeric, add column f float8");
  r.env.source().exec("update public.orders set note = 'Abc', price = 1.0, f = 0 where order_id <= 4");
  r.env.target().exec("update raw.orders set note = 'Abc', price = 1.0, f = 0 where order_id <= 4");
  // Equal under `=` and yet not the source's values.
  r.env.source().exec("update public.orders set price = 1.00 where order_id = 1;"
                      "update public.orders set f = '-0' where order_id = 2;"
                      "update public.orders set note = 'abc' where order_id = 3;"
                      "update public.orders set note = null where order_id = 4");
  REQUIRE(r.reconcile("orders") == 0);
  INFO(r.out.str());
  CHECK(r.out.str().find("0 missing, 4 changed (copied again)") != std::string::npos);
  CHECK(r.target("select price::text from raw.orders where order_id = 1") == "1.00");
  CHECK(r.target("select f::text from raw.orders where order_id = 2") == "-0");
  CHECK(r.target("select note from raw.orders where order_id = 3") == "abc");
  CHECK(r.target("select coalesce(note, 'null') from raw.orders where order_id = 4") == "null");
}

TEST_CASE("a source row above the watermark that the target lacks is not loaded yet: neither missing nor copied") {
  Reconcile r;
  r.env.source().exec("insert into public.orders values (5000, now() + interval '1 day', 1)");
  REQUIRE(r.reconcile("orders") == 0);
  INFO(r.out.str());
  CHECK(r.out.str().find("0 rows deleted, 0 missing") != std::string::npos);
  CHECK(r.target("select count(*) from raw.orders where order_id = 5000") == "0");
}

TEST_CASE("regression: a row updated in the source since the last load is not taken for a deleted one") {
  Reconcile r;
  // Its cursor moved above the watermark: the source no longer counts it
  // among the rows the target must hold, but the target holds it.
  r.env.source().exec("update public.orders set updated_at = now() + interval '1 day' where order_id = 42");
  const ReconcileReport report = r.report("orders");
  CHECK(report.run.status == RunStatus::Success);
  CHECK(report.counts.deleted == 0);
  CHECK(report.counts.missing == 0);
  CHECK(report.differing_buckets == 1);
  CHECK(r.target("select count(*) from raw.orders where order_id = 42") == "1");
}

TEST_CASE("--dry-run prints both counts and example keys and changes nothing") {
  Reconcile r;
  r.env.source().exec("delete from public.orders where order_id in (10, 20, 30)");
  r.env.target().exec("delete from raw.orders where order_id = 99");
  const std::string before = r.target("select md5(string_agg(o::text, ',' order by order_id)) from raw.orders o");
  REQUIRE(r.reconcile("orders", /*dry_run=*/true) == 0);
  INFO(r.out.str());
  CHECK(r.out.str().find("reconcile (dry run) success") != std::string::npos);
  CHECK(r.out.str().find("3 rows to delete, 1 missing") != std::string::npos);
  CHECK(r.out.str().find("would delete, e.g.: (10) (20) (30)") != std::string::npos);
  CHECK(r.out.str().find("missing, e.g.: (99)") != std::string::npos);
  CHECK(r.target("select md5(string_agg(o::text, ',' order by order_id)) from raw.orders o") == before);
  CHECK(r.target("select count(*) from tidemark.runs where trigger = 'reconcile'") == "0");
}

TEST_CASE("composite keys with text that needs quoting are compared, deleted and copied again") {
  Reconcile r;
  r.env.source().exec("delete from public.lines where line_no in (1, 2, 3, 4)");
  r.env.target().exec("delete from raw.lines where line_no in (101, 102, 103, 104)");
  REQUIRE(r.reconcile("lines") == 0);
  INFO(r.out.str());
  CHECK(r.out.str().find("4 rows deleted, 4 missing, 0 changed (copied again)") != std::string::npos);
  CHECK(r.target("select count(*) from raw.lines") == "396");
  CHECK(r.target("select string_agg(order_ref, '|' order by line_no) from raw.lines where line_no between 101 and 104") ==
        r.source("select string_agg(order_ref, '|' order by line_no) from public.lines where line_no between 101 and 104"));
}

TEST_CASE("a table with no differences reads no key: only the two bucket aggregates") {
  Reconcile r;
  r.env.source().exec("analyze public.orders");
  r.env.target().exec("analyze raw.orders");
  const ReconcileReport report = r.report("orders");
  CHECK(report.run.status == RunStatus::Success);
  CHECK(report.buckets == 20);  // 2,000 rows, about 100 keys a bucket
  CHECK(report.differing_buckets == 0);
  CHECK(report.keys_fetched == 0);
  CHECK(report.batches == 0);
}

TEST_CASE("reconcile beside a running load waits for the table's lock, then proceeds") {
  Reconcile r;
  r.env.source().exec("delete from public.orders where order_id = 1");
  // Another session holds the table's lock, as a load does for its whole run.
  PgConnection holder(r.env.dsn("target"), "holder");
  const std::string key = std::to_string(run_lock_key(RunLock{TableKey{"shop", "orders"}, std::nullopt}));
  holder.exec("select pg_advisory_lock(" + key + ")");
  std::atomic<bool> finished{false};
  ReconcileReport report;
  std::thread reconcile([&] {
    report = r.report("orders");
    finished = true;
  });
  // It waits on the lock...
  const std::string waiter = "select count(*) from pg_locks where locktype = 'advisory' and not granted"
                             " and database = (select oid from pg_database where datname = current_database())";
  CHECK(testing::eventually(std::chrono::seconds(5), [&] { return PgTestEnv::rows(holder, waiter).at(0) == "1"; }));
  // ...so it has not finished, nor deleted the row: blocked there, it cannot have.
  CHECK_FALSE(finished.load());
  CHECK(PgTestEnv::rows(holder, "select count(*) from raw.orders where order_id = 1").at(0) == "1");
  // ...and goes on once the load lets it go.
  holder.exec("select pg_advisory_unlock(" + key + ")");
  reconcile.join();
  CHECK(report.run.status == RunStatus::Success);
  CHECK(report.counts.deleted == 1);
  CHECK(r.target("select count(*) from raw.orders where order_id = 1") == "0");
}

TEST_CASE("regression: a row re-inserted in the source after it was marked is unmarked, not marked for ever") {
  Reconcile r;
  r.env.source().exec("delete from public.orders where order_id in (5, 6)");
  REQUIRE(r.reconcile("orders_marked") == 0);
  REQUIRE(r.target("select count(*) from raw.orders_marked where deleted_at is not null") == "2");
  // 5 comes back as a new row (above the watermark): the next load's upsert
  // clears its mark. 6 comes back with its old cursor (a restore): the
  // reconcile copies it again, which clears the mark, and it is not missing.
  r.env.source().exec("insert into public.orders values (5, now(), 5),"
                      " (6, timestamptz '2026-01-01' + 6 * interval '1 minute', 6)");
  RunOptions run;
  run.pipeline = "shop";
  run.table = "orders_marked";
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // row 5's now() past the horizon's margin
  REQUIRE(r.CommandRunner::run(run_run, run) == 0);
  CHECK(r.target("select deleted_at is null from raw.orders_marked where order_id = 5") == "t");
  const ReconcileReport report = r.report("orders_marked");
  CHECK(report.run.status == RunStatus::Success);
  CHECK(report.counts.missing == 0);
  CHECK(report.counts.deleted == 0);
  CHECK(report.restored == 1);
  CHECK(r.target("select count(*) from raw.orders_marked where deleted_at is not null") == "0");
}

TEST_CASE("with the state in a database of its own, each batch's counts commit with the state's transaction") {
  Reconcile r(/*state_in_target=*/false);
  r.env.source().exec("delete from public.orders where order_id between 11 and 15");
  r.env.target().exec("delete from raw.orders where order_id = 1999");
  REQUIRE(r.reconcile("orders") == 0);
  INFO(r.out.str());
  CHECK(r.out.str().find("5 rows deleted, 1 missing, 0 changed (copied again)") != std::string::npos);
  CHECK(r.target("select count(*) from raw.orders") == "1995");  // 2000 - 5 deleted - 1 removed + 1 copied again
  CHECK(PgTestEnv::rows(r.env.state(), "select rows_deleted, rows_missing from tidemark.runs"
                                       " where trigger = 'reconcile'") == std::vector<std::string>{"5|1"});
}

TEST_CASE("a reconcile whose source cannot be reached records its failure in a run row, as a load does") {
  Reconcile r;
  r.env.set_dsn("source", "host=/nonexistent-tidemark-socket port=1 dbname=gone connect_timeout=2");
  const ReconcileReport report = r.report("orders");
  CHECK(report.run.status == RunStatus::Failed);
  CHECK(report.run.run != 0);
  CHECK(report.run.error.find("nonexistent-tidemark-socket") != std::string::npos);
  const auto config = r.env.config(kReconcilePipeline);
  ChunkLogger observer;
  CancelToken cancel;
  JobEndChain ends;
  JobRunner runner(config, observer, sole_owner(), ends);
  const PipelineConfig& pipeline = *config->find_pipeline("shop");
  const JobEnded load = runner.run_one(load_job(pipeline, *pipeline.find_table("orders"), RunTrigger::Manual), cancel);
  CHECK(load.summary.status == RunStatus::Failed);
  CHECK(load.summary.run != 0);
  // Both rows say why, and neither kept its lock.
  CHECK(PgTestEnv::rows(r.env.state(), "select kind, status, error like '%nonexistent-tidemark-socket%'"
                                       " from tidemark.runs where status <> 'success' order by run_id") ==
        std::vector<std::string>{"reconcile|failed|t", "load|failed|t"});
  CHECK(PgTestEnv::rows(r.env.state(), "select count(*) from pg_locks where locktype = 'advisory'"
                                       " and database = (select oid from pg_database where datname = current_database())") ==
        std::vector<std::string>{"0"});
}

TEST_CASE("a reconcile whose target cannot be reached, the state in a database of its own, records its failure") {
  Reconcile r(/*state_in_target=*/false);
  r.env.set_dsn("target", "host=/nonexistent-tidemark-socket port=1 dbname=gone connect_timeout=2");
  const ReconcileReport report = r.report("orders");
  CHECK(report.run.status == RunStatus::Failed);
  CHECK(report.run.run != 0);
  CHECK(PgTestEnv::rows(r.env.state(), "select kind, status, error like '%nonexistent-tidemark-socket%'"
                                       " from tidemark.runs where status <> 'success'") ==
        std::vector<std::string>{"reconcile|failed|t"});
}

TEST_CASE("reconcile exits 2 for an unknown table, a partition table, or a pipeline without deletes and no --table") {
  Reconcile r;
  CHECK(r.reconcile("nope") == 2);
  ReconcileOptions options;
  options.pipeline = "nope";
  CHECK(r.CommandRunner::run(run_reconcile, options) == 2);
  // --table may name an incremental table without deletes: action delete.
  r.env.source().exec("delete from public.orders where order_id = 3");
  REQUIRE(r.reconcile("orders_plain") == 0);
  CHECK(r.out.str().find("1 rows deleted") != std::string::npos);
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("regression: reconcile --table of a shard refuses to run instead of deleting the other shards' rows") {
  PgTestEnv env;
  env.source().exec(
      "create table public.orders_eu (order_id int primary key, updated_at timestamptz not null);"
      "create table public.orders_us (order_id int primary key, updated_at timestamptz not null);"
      "insert into public.orders_eu select g, timestamptz '2026-01-01' + g * interval '1 minute'"
      " from generate_series(1, 100) g;"
      "insert into public.orders_us select g, timestamptz '2026-01-01' + g * interval '1 minute'"
      " from generate_series(101, 200) g");
  env.target().exec(
      "create schema raw;"
      "create table raw.orders (order_id int primary key, updated_at timestamptz not null)");
  testing::CommandRunner runner;
  runner.config_path = env.write_config_files(R"(pipeline: shards
source: source
target: target
schedule: "*/5 * * * *"
tables:
  - name: eu
    source_table: public.orders_eu
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
  - name: us
    source_table: public.orders_us
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
)");
  RunOptions run;
  run.pipeline = "shards";
  REQUIRE(runner.run(run_run, run) == 0);
  REQUIRE(PgTestEnv::rows(env.target(), "select count(*) from raw.orders").at(0) == "200");
  ReconcileOptions options;
  options.pipeline = "shards";
  options.table = "eu";
  CHECK(runner.run(run_reconcile, options) == 2);
  INFO(runner.out.str() << runner.err.str());
  CHECK(runner.err.str().find("also loaded by shards.us") != std::string::npos);
  // The us shard's rows stay.
  CHECK(PgTestEnv::rows(env.target(), "select count(*) from raw.orders").at(0) == "200");
  options.dry_run = true;
  CHECK(runner.run(run_reconcile, options) == 2);
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("regression: the source is asked afresh which keys it holds before they are deleted, by value") {
  Reconcile r;
  const auto config = r.env.config(kReconcilePipeline);
  const TableConfig& lines = *config->find_pipeline("shop")->find_table("lines");
  PgKeySide source(r.env.source(), lines, PgKeySide::Role::Source, /*hash_record=*/true);
  const auto key = [](std::string ref, std::string line) {
    KeyRow k;
    k.columns = {std::move(ref), std::move(line)};
    return k;
  };
  const std::vector<KeyRow> asked{key("a,b", "4"), key("a,b", "5"), key("quote\"d (x)", "2"), key("\u00fc 3", "3"),
                                  key("tab\there", "1")};
  auto held = source.held_now(asked);
  REQUIRE(held);
  CHECK(*held == std::vector<std::size_t>{0, 2, 3, 4});
  // A key written again after a listing is held now.
  r.env.source().exec("delete from public.lines where line_no = 4");
  held = source.held_now(asked);
  REQUIRE(held);
  CHECK(*held == std::vector<std::size_t>{2, 3, 4});
  r.env.source().exec("insert into public.lines values ('a,b', 4, timestamptz '2026-01-01')");
  held = source.held_now(asked);
  REQUIRE(held);
  CHECK(*held == std::vector<std::size_t>{0, 2, 3, 4});
}

}  // namespace tidemark

namespace tidemark {
namespace {

// One table t (public.t into raw.t, key k, cursor updated_at) whose two
// sides the SQL given makes, loaded once: the cases of a key whose type,
// text or zone differs between the sides.
struct OneTable : testing::CommandRunner {
  PgTestEnv env;

  OneTable(const std::string& source_sql, const std::string& target_sql,
           const std::string& deletes = R"({ reconcile: "0 3 * * *" })") {
    env.source().exec(source_sql);
    env.target().exec(target_sql);
    config_path = env.write_config_files(std::string(R"(pipeline: p
source: source
target: target
schedule: "*/5 * * * *"
tables:
  - name: t
    source_table: public.t
    target_table: raw.t
    key: [k]
    cursor: updated_at
    deletes: )") + deletes + "\n");
    RunOptions run;
    run.pipeline = "p";
    REQUIRE(CommandRunner::run(run_run, run) == 0);
  }

  // `tidemark reconcile p`, which must succeed; its output.
  std::string reconcile(bool dry_run = false) {
    ReconcileOptions options;
    options.pipeline = "p";
    options.dry_run = dry_run;
    out.str("");
    CHECK(CommandRunner::run(run_reconcile, options) == 0);
    return out.str();
  }

  std::string target_value(const std::string& sql) { return PgTestEnv::rows(env.target(), sql).at(0); }
};

// Makes new sessions of `connection`'s database use `zone`.
std::string database_time_zone(const std::string& zone) {
  return "do $$ begin execute format('alter database %I set timezone to %L', current_database(), '" + zone +
         "'); end $$;";
}

// 300 timestamp keys an hour apart from 2025-01-01 01:00, in the source.
const char* const kTimestampKeys =
    "create table public.t (k timestamp primary key, updated_at timestamptz not null);"
    "insert into public.t select timestamp '2025-01-01' + g * interval '1 hour',"
    " timestamptz '2026-01-01' + g * interval '1 minute' from generate_series(1, 300) g";

}  // namespace

TEST_CASE("regression: a key that prints differently on the two sides is neither deleted nor counted missing") {
  // A timestamp key in the source loaded into a timestamptz key: the same
  // value prints "2025-01-01 01:00:00" and "2025-01-01 01:00:00+00".
  OneTable t(kTimestampKeys,
             "create schema raw; create table raw.t (k timestamptz primary key, updated_at timestamptz not null)");
  t.env.source().exec("delete from public.t where k = timestamp '2025-01-01 05:00:00'");
  const std::string out = t.reconcile();
  INFO(out);
  CHECK(out.find(" 1 rows deleted") != std::string::npos);
  CHECK(t.target_value("select count(*) from raw.t") == "299");
  // Every other key lists differently on the two sides, yet the target
  // holds it: none is missing, copied again, or alerted on.
  CHECK(out.find(" 0 missing") != std::string::npos);
  CHECK(out.find("missing, e.g.") == std::string::npos);
  CHECK(t.target_value("select rows_missing from tidemark.runs where trigger = 'reconcile'") == "0");
}

TEST_CASE("a marked row whose key prints differently is copied again when its key is back in the source") {
  // The target's check by value must not count a marked row as held: the
  // row is missing until a copy clears its mark.
  OneTable t(kTimestampKeys,
             "create schema raw; create table raw.t (k timestamptz primary key, updated_at timestamptz not null,"
             " deleted_at timestamptz)",
             R"({ reconcile: "0 3 * * *", action: mark, mark_column: deleted_at })");
  t.env.source().exec("delete from public.t where k = timestamp '2025-01-01 05:00:00'");
  t.reconcile();
  REQUIRE(t.target_value("select count(*) from raw.t where deleted_at is not null") == "1");
  // Back, with its old cursor, below the watermark: no load will see it.
  t.env.source().exec(
      "insert into public.t values (timestamp '2025-01-01 05:00:00', timestamptz '2026-01-01 00:05:00')");
  const std::string out = t.reconcile();
  INFO(out);
  CHECK(t.target_value("select count(*) from raw.t where deleted_at is not null") == "0");
  CHECK(t.target_value("select count(*) from raw.t") == "300");
}

TEST_CASE("regression: a target column of a NOT NULL domain does not stop reconcile's checks and deletes") {
  // A check by value used to build a record of the target's row type from
  // the key columns alone; every other column of it was NULL, which a NOT
  // NULL domain refuses. A load writes such a table without trouble.
  OneTable t(
      "create table public.t (k int primary key, updated_at timestamptz not null, v int not null);"
      "insert into public.t select g, timestamptz '2026-01-01' + g * interval '1 minute', g"
      " from generate_series(1, 300) g",
      "create domain public.required_int as int not null;"
      "create schema raw; create table raw.t (k int primary key, updated_at timestamptz not null,"
      " v public.required_int)");
  t.env.target().exec("delete from raw.t where k in (7, 150)");
  std::string out = t.reconcile(/*dry_run=*/true);
  INFO(out);
  CHECK(out.find("0 rows to delete, 2 missing") != std::string::npos);
  out = t.reconcile();
  INFO(out);
  CHECK(out.find("0 rows deleted, 2 missing, 0 changed (copied again)") != std::string::npos);
  CHECK(t.target_value("select count(*) from raw.t") == "300");
  // The delete reads its keys the same way.
  t.env.source().exec("delete from public.t where k in (3, 4)");
  t.env.target().exec("delete from raw.t where k = 200");
  out = t.reconcile();
  INFO(out);
  CHECK(out.find("2 rows deleted, 1 missing, 0 changed (copied again)") != std::string::npos);
  CHECK(t.target_value("select count(*) from raw.t") == "298");
  CHECK(t.target_value("select count(*) from raw.t where k in (3, 4)") == "0");
  CHECK(t.target_value("select count(*) from raw.t where k = 200") == "1");
}

TEST_CASE("regression: a timestamp key loaded into timestamptz in a target zone other than UTC keeps its rows") {
  // Reconcile read the keys in UTC where the load had read them in another
  // zone, took every row for deleted, and deleted them all. A load reads a
  // timestamp in the source's zone (New York), whatever the target's own
  // (Kolkata): reconcile must read it there too.
  OneTable t(database_time_zone("America/New_York") + kTimestampKeys,
             database_time_zone("Asia/Kolkata") +
                 "create schema raw;"
                 " create table raw.t (k timestamptz primary key, updated_at timestamptz not null)");
  REQUIRE(t.target_value("select count(*) from raw.t") == "300");
  CHECK(t.target_value("select count(*) from raw.t where k = timestamptz '2025-01-01 05:00:00-05'") == "1");
  std::string out = t.reconcile(/*dry_run=*/true);
  INFO(out);
  CHECK(out.find(" 0 rows to delete, 0 missing") != std::string::npos);
  // A real reconcile deletes exactly the row gone from the source, at the
  // instant the load wrote it, and copies nothing again.
  t.env.source().exec("delete from public.t where k = timestamp '2025-01-01 05:00:00'");
  out = t.reconcile();
  INFO(out);
  CHECK(out.find(" 1 rows deleted, 0 missing") != std::string::npos);
  CHECK(t.target_value("select count(*) from raw.t") == "299");
  CHECK(t.target_value("select count(*) from raw.t where k = timestamptz '2025-01-01 05:00:00-05'") == "0");
  CHECK(t.target_value("select count(*) from raw.t where k = timestamptz '2025-01-01 06:00:00-05'") == "1");
}

TEST_CASE("a timestamptz key loaded into timestamp from a source whose time zone is not UTC keeps its rows") {
  // The mirror case: the load printed the source's instants in the
  // source session's zone and the target dropped the offset.
  OneTable t(database_time_zone("America/New_York") +
                 "create table public.t (k timestamptz primary key, updated_at timestamptz not null);"
                 "insert into public.t select timestamptz '2025-01-01 00:00:00+00' + g * interval '1 hour',"
                 " timestamptz '2026-01-01' + g * interval '1 minute' from generate_series(1, 100) g",
             "create schema raw; create table raw.t (k timestamp primary key, updated_at timestamptz not null)");
  // 05:00 UTC is midnight in New York: that is what the target holds.
  REQUIRE(t.target_value("select count(*) from raw.t where k = timestamp '2025-01-01 00:00:00'") == "1");
  t.env.source().exec("delete from public.t where k = timestamptz '2025-01-01 05:00:00+00'");
  const std::string out = t.reconcile();
  INFO(out);
  CHECK(out.find(" 1 rows deleted, 0 missing") != std::string::npos);
  CHECK(t.target_value("select count(*) from raw.t") == "99");
  CHECK(t.target_value("select count(*) from raw.t where k = timestamp '2025-01-01 00:00:00'") == "0");
}

TEST_CASE("a dry run reports a missing key the target's key type cannot hold instead of failing") {
  // A row written below the watermark after the load, with a key longer
  // than the target's varchar(8): no load has seen it, and the dry run
  // is how an operator finds it. Asking the target whether it holds that
  // key must not fail the whole reconcile.
  OneTable t(
      "create table public.t (k text primary key, updated_at timestamptz not null);"
      "insert into public.t select 'k' || g, timestamptz '2026-01-01' + g * interval '1 minute'"
      " from generate_series(1, 100) g",
      "create schema raw; create table raw.t (k varchar(8) primary key, updated_at timestamptz not null)");
  t.env.source().exec("insert into public.t values ('a-key-too-long-for-the-target', timestamptz '2026-01-01')");
  const std::string out = t.reconcile(/*dry_run=*/true);
  INFO(out);
  CHECK(out.find("0 rows to delete, 1 missing") != std::string::npos);
}

}  // namespace tidemark
