// Partition tables and backfills against a real PostgreSQL, in
// Europe/Berlin so that 23- and 25-hour days are part of every check.
#include <doctest/doctest.h>

#include <sstream>

#include "core/run/cancel_token.h"
#include "daemon/commands/chunk_logger.h"
#include "daemon/commands/commands.h"
#include "daemon/pg/state/state_schema.h"
#include "daemon/serve/job_runner.h"
#include "pg_test_env.h"

namespace tidemark {
namespace {

using testing::PgTestEnv;

const char* const kPartitionPipeline = R"(pipeline: shop
source: source
target: target
schedule: "15 0 * * *"
timezone: Europe/Berlin
tables:
  - name: daily_revenue
    mode: partition
    partition: { column: day_start, unit: day }
    query: |
      select $1::timestamptz as day_start, count(*) as orders, coalesce(sum(amount), 0) as revenue
      from orders where ordered_at >= $1 and ordered_at < $2 and status = 'completed'
    target_table: mart.daily_revenue
  - name: hours_per_day
    mode: partition
    partition: { column: day }
    query: |
      select $1::date as day, count(distinct date_trunc('hour', ordered_at)) as hours
      from orders where (ordered_at at time zone 'Europe/Berlin')::date >= $1
                    and (ordered_at at time zone 'Europe/Berlin')::date < $2
    target_table: mart.hours_per_day
)";

// The same aggregate, straight from the source, one row per local day.
const char* const kDirectRevenue =
    "select (d::timestamp at time zone 'Europe/Berlin') as day_start, count(o.order_id),"
    " coalesce(sum(o.amount), 0) from generate_series(date '2026-03-27', date '2026-03-31', interval '1 day') d"
    " left join orders o on o.status = 'completed' and (o.ordered_at at time zone 'Europe/Berlin')::date = d::date"
    " group by 1 order by 1";

struct Shop : testing::CommandRunner {
  PgTestEnv env;
  BackfillOptions options;

  Shop() {
    // One order every real hour around both changes of 2026, every third one open.
    env.source().exec(
        "create table orders (order_id serial primary key, status text not null, amount numeric(10,2) not null,"
        " ordered_at timestamptz not null);"
        "insert into orders (status, amount, ordered_at)"
        " select case when g % 3 = 0 then 'new' else 'completed' end, 10 + g % 7, t"
        " from generate_series(timestamptz '2026-03-26 22:00Z', timestamptz '2026-04-01 21:59Z', interval '1 hour')"
        " with ordinality as s(t, g);"
        "insert into orders (status, amount, ordered_at)"
        " select 'completed', 1, t"
        " from generate_series(timestamptz '2026-10-22 22:00Z', timestamptz '2026-10-28 22:59Z', interval '1 hour') t");
    env.target().exec(
        "create schema mart;"
        "create table mart.daily_revenue (day_start timestamptz not null, orders bigint not null, revenue numeric);"
        "create table mart.hours_per_day (day date not null, hours bigint not null)");
    config_path = env.write_config_files(kPartitionPipeline);
    options.pipeline = "shop";
    options.parallel = 2;
  }
  int backfill(const std::string& table, const std::string& from, const std::string& to) {
    options.table = table;
    options.from = from;
    options.to = to;
    return run(run_backfill, options);
  }
  std::vector<std::string> revenue() {
    return PgTestEnv::rows(env.target(), "select day_start, orders, revenue from mart.daily_revenue order by 1");
  }
};

}  // namespace

TEST_CASE("a backfill writes exact aggregates for every day, and re-running it changes nothing") {
  Shop shop;
  REQUIRE(shop.backfill("daily_revenue", "2026-03-27", "2026-04-01") == 0);
  CHECK(shop.out.str().find("5 partitions, 5 done, 0 failed") != std::string::npos);
  const auto expected = PgTestEnv::rows(shop.env.source(), kDirectRevenue);
  CHECK(shop.revenue() == expected);

  // Idempotent: --rerun replaces every partition with the same rows.
  shop.options.rerun = true;
  REQUIRE(shop.backfill("daily_revenue", "2026-03-27", "2026-04-01") == 0);
  CHECK(shop.revenue() == expected);
  // Without --rerun a second invocation has nothing left to do.
  shop.options.rerun = false;
  REQUIRE(shop.backfill("daily_revenue", "2026-03-27", "2026-04-01") == 0);
  CHECK(shop.out.str().find("0 partitions to write (5 already done") != std::string::npos);
}

TEST_CASE("a correction in one past day is fixed by a one-day backfill; other days are untouched") {
  Shop shop;
  REQUIRE(shop.backfill("daily_revenue", "2026-03-27", "2026-04-01") == 0);
  const auto untouched_before = PgTestEnv::rows(
      shop.env.target(), "select day_start, xmin from mart.daily_revenue where day_start <> '2026-03-29 00:00+01' order by 1");
  shop.env.source().exec(
      "update orders set amount = amount + 100 where order_id = (select min(order_id) from orders"
      " where status = 'completed' and ordered_at >= '2026-03-29 00:00+01' and ordered_at < '2026-03-30 00:00+02')");
  shop.options.rerun = true;
  REQUIRE(shop.backfill("daily_revenue", "2026-03-29", "2026-03-30") == 0);
  CHECK(shop.revenue() == PgTestEnv::rows(shop.env.source(), kDirectRevenue));
  CHECK(PgTestEnv::rows(shop.env.target(),
                        "select day_start, xmin from mart.daily_revenue where day_start <> '2026-03-29 00:00+01' "
                        "order by 1") == untouched_before);
}

TEST_CASE("verify compares each recent partition with what its query returns now; backfill --rerun fixes it") {
  Shop shop;
  REQUIRE(shop.backfill("daily_revenue", "2026-03-27", "2026-04-01") == 0);
  REQUIRE(shop.backfill("hours_per_day", "2026-03-27", "2026-04-01") == 0);
  VerifyOptions verify;
  verify.pipeline = "shop";
  std::ostringstream().swap(shop.out);
  CHECK(shop.run(run_verify, verify) == 0);
  const std::string clean = shop.out.str();
  CHECK(clean.find("shop.daily_revenue: the last 5 partitions done") != std::string::npos);
  CHECK(clean.find("2026-03-29") != std::string::npos);  // the 23-hour day
  CHECK(clean.find("DIFFERENT") == std::string::npos);
  CHECK(clean.find("shop.hours_per_day: the last 5 partitions done") != std::string::npos);  // a date column

  // A late correction in the source on one day: that day's partition no
  // longer holds what its query returns.
  shop.env.source().exec(
      "update orders set amount = amount + 100 where order_id = (select min(order_id) from orders"
      " where status = 'completed' and ordered_at >= '2026-03-29 00:00+01' and ordered_at < '2026-03-30 00:00+02')");
  std::ostringstream().swap(shop.out);
  verify.table = "daily_revenue";
  CHECK(shop.run(run_verify, verify) == 1);
  const std::string report = shop.out.str();
  INFO(report);
  CHECK(report.find("2026-03-29") != std::string::npos);
  CHECK(report.find("DIFFERENT VALUES") != std::string::npos);
  const auto line_of = [&](const std::string& day) {
    const auto at = report.find("  " + day);
    return at == std::string::npos ? std::string() : report.substr(at, report.find('\n', at) - at);
  };
  CHECK(line_of("2026-03-29").find("DIFFERENT VALUES") != std::string::npos);
  CHECK(line_of("2026-03-28").find("ok") != std::string::npos);
  CHECK(report.find("tidemark backfill shop --table daily_revenue --from '2026-03-29 00:00:00' --to "
                    "'2026-03-30 00:00:00' --rerun") != std::string::npos);

  // The advice works.
  shop.options.rerun = true;
  REQUIRE(shop.backfill("daily_revenue", "2026-03-29 00:00:00", "2026-03-30 00:00:00") == 0);
  std::ostringstream().swap(shop.out);
  CHECK(shop.run(run_verify, verify) == 0);
}

TEST_CASE("reconcile of a partition table compares every done partition, not only the most recent, and rewrites") {
  Shop shop;
  // Ten days: verify sees the last seven, reconcile all of them.
  REQUIRE(shop.backfill("daily_revenue", "2026-03-22", "2026-04-01") == 0);
  ReconcileOptions reconcile;
  reconcile.pipeline = "shop";
  reconcile.table = "daily_revenue";
  std::ostringstream().swap(shop.out);
  CHECK(shop.run(run_reconcile, reconcile) == 0);
  CHECK(shop.out.str().find("shop.daily_revenue: reconcile success, 10 partitions compared, 0 differed, 0 written "
                            "again") != std::string::npos);

  // The oldest day's partition is changed in the target: too old for verify.
  shop.env.target().exec("update mart.daily_revenue set revenue = revenue + 1 where day_start = '2026-03-22 00:00+01'");
  const char* const kOldestDay = "select revenue from mart.daily_revenue where day_start = '2026-03-22 00:00+01'";
  const auto tampered = PgTestEnv::rows(shop.env.target(), kOldestDay);
  VerifyOptions verify;
  verify.pipeline = "shop";
  verify.table = "daily_revenue";
  std::ostringstream().swap(shop.out);
  CHECK(shop.run(run_verify, verify) == 0);
  std::ostringstream().swap(shop.out);
  reconcile.dry_run = true;
  CHECK(shop.run(run_reconcile, reconcile) == 1);
  std::string report = shop.out.str();
  INFO(report);
  CHECK(report.find("10 partitions compared, 1 differed, rows written 0") != std::string::npos);
  CHECK(report.find("2026-03-22: would be written again: the query returns other values in 1 row") !=
        std::string::npos);
  // The partitions are listed oldest first.
  CHECK(report.find("2026-03-22:") < report.find("2026-03-23:"));
  // A dry run changes nothing; a reconcile writes the partition again.
  CHECK(PgTestEnv::rows(shop.env.target(), kOldestDay) == tampered);
  std::ostringstream().swap(shop.out);
  reconcile.dry_run = false;
  CHECK(shop.run(run_reconcile, reconcile) == 0);
  report = shop.out.str();
  CHECK(report.find("1 differed, 1 written again") != std::string::npos);
  CHECK(report.find("2026-03-22: written again: the query returns other values in 1 row") != std::string::npos);
  CHECK(PgTestEnv::rows(shop.env.target(), kOldestDay) != tampered);
  // Its run row says why it was written again.
  CHECK(PgTestEnv::rows(shop.env.state(),
                        "select trigger || ' ' || kind || ': ' || rewrite_reason from tidemark.runs"
                        " where rewrite_reason is not null") ==
        std::vector<std::string>{"reconcile reconcile: reconcile: the query returns other values in 1 row"});
  std::ostringstream().swap(shop.out);
  CHECK(shop.run(run_reconcile, reconcile) == 0);
  CHECK(shop.out.str().find("10 partitions compared, 0 differed") != std::string::npos);
}

TEST_CASE("verify of a partition table with nothing written says so") {
  Shop shop;
  VerifyOptions verify;
  verify.pipeline = "shop";
  verify.table = "daily_revenue";
  CHECK(shop.run(run_verify, verify) == 0);
  CHECK(shop.out.str().find("shop.daily_revenue: no partition written yet; nothing to compare") != std::string::npos);
}

TEST_CASE("days of 23 and 25 hours in Europe/Berlin are one partition each") {
  Shop shop;
  REQUIRE(shop.backfill("hours_per_day", "2026-03-28", "2026-03-31") == 0);
  REQUIRE(shop.backfill("hours_per_day", "2026-10-24", "2026-10-27") == 0);
  CHECK(PgTestEnv::rows(shop.env.target(), "select day, hours from mart.hours_per_day order by 1") ==
        std::vector<std::string>{"2026-03-28|24", "2026-03-29|23", "2026-03-30|24", "2026-10-24|24",
                                 "2026-10-25|25", "2026-10-26|24"});
}

TEST_CASE("an interrupted backfill resumes with only what is missing") {
  Shop shop;
  // The partition of 2026-03-29 fails the first time (a division by zero).
  shop.env.source().exec(
      "create function fragile(day timestamptz) returns int language sql as"
      " $$ select 1 / (case when day = '2026-03-29 00:00+01' and not exists"
      " (select 1 from pg_class where relname = 'fixed') then 0 else 1 end) $$");
  const std::string fragile = std::string(kPartitionPipeline).replace(
      std::string(kPartitionPipeline).find("coalesce(sum(amount), 0) as revenue"), 35,
      "coalesce(sum(amount), 0) * fragile($1) as revenue");
  shop.config_path = shop.env.write_config_files(fragile);
  CHECK(shop.backfill("daily_revenue", "2026-03-27", "2026-04-01") == 1);
  CHECK(shop.out.str().find("4 done, 1 failed") != std::string::npos);
  CHECK(shop.out.str().find("2026-03-29: failed") != std::string::npos);
  CHECK(PgTestEnv::rows(shop.env.state(),
                        "select status from tidemark.partitions where partition_lo = '2026-03-29 00:00+01'")[0] ==
        "failed");

  shop.env.source().exec("create table fixed ()");
  REQUIRE(shop.backfill("daily_revenue", "2026-03-27", "2026-04-01") == 0);
  CHECK(shop.out.str().find("1 partition to write (4 already done") != std::string::npos);
  CHECK(shop.revenue() == PgTestEnv::rows(shop.env.source(), kDirectRevenue));
}

// Issue 10, item 7: this planned 3.65 million partitions and printed 2.9
// million lines.
TEST_CASE("regression: a backfill of more than --max-partitions is refused before anything is read") {
  Shop shop;
  CHECK(shop.backfill("daily_revenue", "0001-01-01", "9999-12-31") == 2);
  CHECK(shop.err.str() ==
        "tidemark backfill: --from 0001-01-01 --to 9999-12-31 spans more than 100000 partitions of table "
        "shop.daily_revenue: check the dates, split the range, or pass --max-partitions with a higher limit\n");
  CHECK(shop.out.str().empty());
  CHECK(PgTestEnv::rows(shop.env.state(), "select count(*) from tidemark.runs")[0] == "0");
  shop.options.max_partitions = 3;
  CHECK(shop.backfill("daily_revenue", "2026-03-27", "2026-03-31") == 2);
  CHECK(shop.backfill("daily_revenue", "2026-03-27", "2026-03-30") == 0);
}

TEST_CASE("partitions that are not complete yet are skipped with a message") {
  Shop shop;
  REQUIRE(shop.backfill("daily_revenue", "2026-03-30", "2099-01-01") == 0);
  // One line for all of them, not one per day up to 2099.
  CHECK(shop.out.str().find(" through 2098-12-31 (") != std::string::npos);
  CHECK(shop.out.str().find(" partitions): they are not complete yet\n") != std::string::npos);
  const auto today = PgTestEnv::rows(
      shop.env.target(),
      "select count(*) from mart.daily_revenue where day_start > now() - interval '1 day'");
  CHECK(today[0] == "0");
}

TEST_CASE("a scheduled run writes the last complete day, never the one being filled") {
  Shop shop;
  shop.env.source().exec(
      "insert into orders (status, amount, ordered_at) select 'completed', 5, now() - g * interval '1 hour'"
      " from generate_series(0, 47) g");
  testing::TableRuns runs(shop.env, shop.env.config(kPartitionPipeline));
  const JobEnded first = runs.run("shop", "daily_revenue", RunTrigger::Schedule);
  REQUIRE(first.summary.status == RunStatus::Success);
  CHECK(first.summary.chunks == 1);
  const auto written = shop.revenue();
  REQUIRE(written.size() == 1);
  // It is yesterday, in Berlin.
  CHECK(PgTestEnv::rows(shop.env.target(),
                        "select day_start = (((now() at time zone 'Europe/Berlin')::date - 1)::timestamp"
                        " at time zone 'Europe/Berlin') from mart.daily_revenue")[0] == "t");
  // A second firing the same day has nothing to do.
  CHECK(runs.run("shop", "daily_revenue", RunTrigger::Schedule).summary.chunks == 0);
  // The firing's end carries the partition it wrote as its run, counted once.
  CHECK(first.runs.size() == 1);
  CHECK(first.runs.at(0).run == first.summary.run);
}

// What a job runner tells: every start and every end.
struct HeardJobs final : JobEnds {
  std::vector<TableKey> started;
  std::vector<JobEnded> ended;
  void job_started(const TableKey& table, JobKind, const RunMeter&) override { started.push_back(table); }
  void job_ended(const JobEnded& job) override { ended.push_back(job); }
};

TEST_CASE("a reconcile's end is told once, with the partitions it wrote again as its runs") {
  Shop shop;
  REQUIRE(shop.backfill("daily_revenue", "2026-03-27", "2026-03-31") == 0);
  shop.env.target().exec("update mart.daily_revenue set revenue = revenue + 1 where day_start = '2026-03-28 00:00+01'");
  const auto config = shop.env.config(kPartitionPipeline);
  const PipelineConfig& pipeline = *config->find_pipeline("shop");
  ChunkLogger progress;
  HeardJobs heard;
  CancelToken cancel;
  JobRunner runner(config, progress, sole_owner(), heard);
  const JobEnded ended =
      runner.run_one(reconcile_job(pipeline, *pipeline.find_table("daily_revenue"), ReconcileRequest{}), cancel);
  CHECK(heard.started == std::vector<TableKey>{TableKey{"shop", "daily_revenue"}});
  REQUIRE(heard.ended.size() == 1);
  CHECK(heard.ended.front().kind == JobKind::Reconcile);
  CHECK(ended.kind == JobKind::Reconcile);
  CHECK(ended.summary.status == RunStatus::Success);
  REQUIRE(ended.reconcile);
  CHECK(ended.reconcile->partitions.size() == 4);
  // One partition differed and was written again: a run of its own, the
  // reconcile's own run is not one.
  REQUIRE(ended.runs.size() == 1);
  CHECK(ended.runs.front().status == RunStatus::Success);
  CHECK(ended.runs.front().rows_written == 1);
}

namespace {

// daily_revenue with another query: `query_lines` are its lines, indented for the YAML block.
std::string daily_revenue_with(const std::string& query_lines) {
  return R"(pipeline: shop
source: source
target: target
schedule: "15 0 * * *"
timezone: Europe/Berlin
tables:
  - name: daily_revenue
    mode: partition
    partition: { column: day_start, unit: day }
    target_table: mart.daily_revenue
    query: |
)" + query_lines;
}

std::string last_failure(PgTestEnv& env) {
  const auto rows = PgTestEnv::rows(env.state(), "select error from tidemark.runs where status = 'failed' order by run_id desc limit 1");
  return rows.empty() ? std::string() : rows[0];
}

}  // namespace

TEST_CASE("a partition query that returns rows outside its partition fails it and writes nothing") {
  Shop shop;
  REQUIRE(shop.backfill("daily_revenue", "2026-03-28", "2026-03-30") == 0);
  const auto before = shop.revenue();
  REQUIRE(before.size() == 2);

  // $1 and $2 only in a comment: every day comes back for every partition.
  shop.config_path = shop.env.write_config_files(daily_revenue_with(
      "      -- meant to be filtered on [$1, $2)\n"
      "      select date_trunc('day', ordered_at, 'Europe/Berlin') as day_start, count(*) as orders,\n"
      "             coalesce(sum(amount), 0) as revenue\n"
      "      from orders where status = 'completed' group by 1 order by 1;\n"));
  shop.options.rerun = true;
  shop.options.parallel = 1;
  CHECK(shop.backfill("daily_revenue", "2026-03-29", "2026-03-31") == 1);
  CHECK(shop.out.str().find("0 done, 2 failed") != std::string::npos);
  // Nothing written: the day done before keeps its rows, no other day appears.
  CHECK(shop.revenue() == before);
  CHECK(PgTestEnv::rows(shop.env.state(), "select (partition_lo at time zone 'Europe/Berlin')::date, status from tidemark.partitions order by 1") ==
        std::vector<std::string>{"2026-03-28|done", "2026-03-29|done", "2026-03-30|failed"});
  // The error names the partition, the table, the column and the value.
  const std::string error = last_failure(shop.env);
  CHECK(error.find("partition [2026-03-29T22:00:00Z, 2026-03-30T22:00:00Z) of shop.daily_revenue") !=
        std::string::npos);
  CHECK(error.find("a row with day_start = 2026-03-2") != std::string::npos);
  CHECK(error.find("outside the partition") != std::string::npos);
  CHECK(PgTestEnv::rows(shop.env.state(), "select count(*) from tidemark.runs where status = 'running'")[0] == "0");
}

TEST_CASE("a partition row whose partition column is NULL is outside its partition") {
  Shop shop;
  shop.config_path = shop.env.write_config_files(daily_revenue_with(
      "      select case when n = 2 then null else $1::timestamptz end as day_start, n as orders, 0 as revenue\n"
      "      from generate_series(1, 3) n where $1::timestamptz < $2\n"));
  CHECK(shop.backfill("daily_revenue", "2026-03-29", "2026-03-30") == 1);
  CHECK(last_failure(shop.env).find("a row with day_start NULL, outside the partition") != std::string::npos);
  CHECK(shop.revenue().empty());
}

TEST_CASE("a partition query that does not return the partition column is told so") {
  Shop shop;
  shop.config_path = shop.env.write_config_files(daily_revenue_with(
      "      select $1::timestamptz as day, count(*) as orders, 0 as revenue\n"
      "      from orders where ordered_at >= $1 and ordered_at < $2\n"));
  CHECK(shop.backfill("daily_revenue", "2026-03-29", "2026-03-30") == 1);
  CHECK(last_failure(shop.env).find("the query returns no column day_start (partition.column)") != std::string::npos);
  CHECK(shop.revenue().empty());
}

}  // namespace tidemark
