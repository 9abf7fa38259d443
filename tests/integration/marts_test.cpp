// Marts against a real PostgreSQL, with the example tidemark grew from:
// completed orders and revenue per day. Built straight from the shop
// (shop.daily_revenue, a lookback of 3 days) and from the copy tidemark
// loads into the warehouse (marts.wh_revenue, inputs: [shop.orders]).
// The days are the last six before today (UTC), so scheduled runs
// (`tidemark run`) meet them as the daemon would.
#include <doctest/doctest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "daemon/commands/commands.h"
#include "daemon/commands/validate_command.h"
#include "pg_test_env.h"

namespace tidemark {
namespace {

using testing::PgTestEnv;

// One of `back` days before today (UTC), as the server's date text.
std::string day(PgTestEnv& env, int back) {
  return PgTestEnv::rows(env.source(), "select ((now() at time zone 'UTC')::date - " + std::to_string(back) + ")::text")
      .at(0);
}

std::string pipelines_shop(const std::string& initial) {
  return R"(pipeline: shop
source: source
target: target
schedule: "0 0 1 1 *"
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
  - name: daily_revenue
    mode: partition
    partition: { column: day, unit: day }
    lookback: 3d
    initial: ")" + initial + R"("
    query: |
      select $1::date as day, count(*) as orders, coalesce(sum(amount), 0) as revenue
      from orders where ordered_at >= $1 and ordered_at < $2 and status = 'completed'
    target_table: mart.daily_revenue
)";
}

std::string pipeline_marts(const std::string& initial) {
  return R"(pipeline: marts
source: target
target: target
schedule: "0 0 1 1 *"
stale_after: 2d
tables:
  - name: wh_revenue
    mode: partition
    partition: { column: day, unit: day }
    initial: ")" + initial + R"("
    inputs: [shop.orders]
    query: |
      select $1::date as day, count(*) as orders, coalesce(sum(amount), 0) as revenue
      from raw.orders where ordered_at >= $1 and ordered_at < $2 and status = 'completed'
    target_table: mart.wh_revenue
)";
}

struct Marts : testing::CommandRunner {
  PgTestEnv env;

  explicit Marts(bool state_in_target = true) : env(state_in_target) {
    // A day that ends while the test runs would move every partition.
    const auto seconds_to_midnight = std::stoi(PgTestEnv::rows(
        env.source(), "select extract(epoch from date_trunc('day', now() at time zone 'UTC') + interval '1 day'"
                      " - (now() at time zone 'UTC'))::int")[0]);
    if (seconds_to_midnight < 120) std::this_thread::sleep_for(std::chrono::seconds(seconds_to_midnight + 2));
    // Seven orders on each of the last six days, every fourth cancelled;
    // updated_at is stamped by a trigger on every update (and was the
    // order's time when it was placed).
    env.source().exec(R"SQL(
create table orders (order_id int primary key, status text not null, amount numeric(10,2) not null,
                     ordered_at timestamptz not null, updated_at timestamptz not null);
create function stamp() returns trigger language plpgsql as
  $$ begin new.updated_at := clock_timestamp(); return new; end $$;
create trigger stamp before update on orders for each row execute function stamp();
insert into orders
select row_number() over (), case when row_number() over () % 4 = 0 then 'cancelled' else 'completed' end,
       10 + (row_number() over ()) % 7, t, t
from generate_series(1, 6) back, unnest(array[1, 5, 9, 13, 17, 21, 23]) hour,
     lateral (select date_trunc('day', now() at time zone 'UTC') at time zone 'UTC' - back * interval '1 day'
                     + hour * interval '1 hour' as t) o;
)SQL");
    env.target().exec(R"SQL(
create schema raw;
create table raw.orders (order_id int primary key, status text not null, amount numeric(10,2) not null,
                         ordered_at timestamptz not null, updated_at timestamptz not null);
create schema mart;
create table mart.daily_revenue (day date primary key, orders bigint not null, revenue numeric not null);
create table mart.wh_revenue (day date primary key, orders bigint not null, revenue numeric not null);
)SQL");
    const std::string initial = day(env, 5);
    config_path = env.write_config_files({pipelines_shop(initial), pipeline_marts(initial)});
  }

  int run_table(const std::string& pipeline, const std::string& table) {
    RunOptions options;
    options.pipeline = pipeline;
    options.table = table;
    return run(run_run, options);
  }
  int rewind(const std::string& to, const std::string& reason) {
    RewindOptions options;
    options.pipeline = "shop";
    options.table = "orders";
    options.to = to;
    options.reason = reason;
    return run(run_rewind, options);
  }
  // What the query returns on the shop for each of the last five days.
  std::vector<std::string> expected() {
    return PgTestEnv::rows(env.source(), R"SQL(
select d::date, count(o.order_id), coalesce(sum(o.amount), 0)
from generate_series((now() at time zone 'UTC')::date - 5, (now() at time zone 'UTC')::date - 1, interval '1 day') d
left join orders o on o.status = 'completed' and o.ordered_at >= d::timestamp at time zone 'UTC'
                  and o.ordered_at < (d + interval '1 day')::timestamp at time zone 'UTC'
group by 1 order by 1
)SQL");
  }
  std::vector<std::string> mart(const std::string& table) {
    return PgTestEnv::rows(env.target(), "select day, orders, revenue from mart." + table + " order by 1");
  }
  // A change of an order placed on `date` that the cursor cannot see (the
  // trigger that stamps it is off for this session): no run loads it.
  void change_unseen(const std::string& date) {
    env.source().exec(
        "set session_replication_role = replica;"
        "update orders set amount = amount + 500 where order_id = (select min(order_id) from orders"
        " where status = 'completed' and ordered_at::date = '" + date + "');"
        "reset session_replication_role");
  }
  std::vector<std::string> state(const std::string& query) { return PgTestEnv::rows(env.state(), query); }
  nlohmann::json status_of(const std::string& pipeline, const std::string& table) {
    StatusOptions options;
    options.json = true;
    std::ostringstream().swap(out);
    REQUIRE(run(run_status, options) == 0);
    for (const auto& row : nlohmann::json::parse(out.str())) {
      if (row["pipeline"] == pipeline && row["table"] == table) return row;
    }
    FAIL("no status row for " << pipeline << "." << table);
    return {};
  }
};

}  // namespace

TEST_CASE("marts: the shop's changes after their day reach every partition within the lookback in one firing") {
  Marts m;
  REQUIRE(m.run_table("shop", "daily_revenue") == 0);
  REQUIRE(m.mart("daily_revenue") == m.expected());
  const std::vector<std::string> days = {day(m.env, 5), day(m.env, 4), day(m.env, 3), day(m.env, 2), day(m.env, 1)};

  // What shops do: yesterday an order went from cancelled to completed, an
  // order placed two days ago offline arrived now, one of three days ago
  // was refunded; and one of five days ago changed, past the lookback.
  m.env.source().exec(
      "update orders set status = 'completed' where order_id = (select min(order_id) from orders"
      " where status = 'cancelled' and ordered_at::date = '" + days[4] + "');"
      "insert into orders values (1000, 'completed', 99.50, '" + days[3] + " 10:00+00', clock_timestamp());"
      "delete from orders where order_id = (select min(order_id) from orders"
      " where status = 'completed' and ordered_at::date = '" + days[2] + "');"
      "update orders set amount = amount + 1000 where order_id = (select min(order_id) from orders"
      " where status = 'completed' and ordered_at::date = '" + days[0] + "')");
  const auto untouched = m.state("select count(*) from tidemark.runs")[0];
  const auto versions_before = PgTestEnv::rows(m.env.target(), "select day, xmin from mart.daily_revenue order by 1");

  REQUIRE(m.run_table("shop", "daily_revenue") == 0);
  const auto now = m.mart("daily_revenue");
  const auto want = m.expected();
  // The lookback reaches the newest complete day and the three before it.
  CHECK(now[1] == want[1]);
  CHECK(now[2] == want[2]);
  CHECK(now[3] == want[3]);
  CHECK(now[4] == want[4]);
  CHECK(now[0] != want[0]);  // five days ago: past the lookback
  // Three partitions were written again, each its own run saying why; the
  // unchanged one (four days ago) keeps its row version.
  CHECK(m.state("select count(*) from tidemark.runs where rewrite_reason like 'lookback: %'")[0] == "3");
  CHECK(std::stoi(m.state("select count(*) from tidemark.runs")[0]) == std::stoi(untouched) + 3);
  const auto versions = PgTestEnv::rows(m.env.target(), "select day, xmin from mart.daily_revenue order by 1");
  CHECK(versions[1] == versions_before[1]);
  CHECK(versions[0] == versions_before[0]);
  INFO(m.out.str());
  // Each day is one row of the query: its values changed.
  CHECK(m.out.str().find("written again: " + days[2] + " lookback: the query returns other values in 1 row; " +
                         days[3] + " lookback: the query returns other values in 1 row; " + days[4] +
                         " lookback: the query returns other values in 1 row") != std::string::npos);

  HistoryOptions history;
  history.pipeline = "shop";
  std::ostringstream().swap(m.out);
  REQUIRE(m.run(run_history, history) == 0);
  CHECK(m.out.str().find("written again: lookback: the query returns other values in 1 row") != std::string::npos);

  // A firing with nothing changed writes nothing: no row, no run row.
  const auto runs = m.state("select count(*) from tidemark.runs")[0];
  REQUIRE(m.run_table("shop", "daily_revenue") == 0);
  CHECK(m.state("select count(*) from tidemark.runs")[0] == runs);
  CHECK(PgTestEnv::rows(m.env.target(), "select day, xmin from mart.daily_revenue order by 1") == versions);

  // verify names the day past the lookback; reconcile writes it again.
  VerifyOptions verify;
  verify.pipeline = "shop";
  verify.table = "daily_revenue";
  std::ostringstream().swap(m.out);
  CHECK(m.run(run_verify, verify) == 1);
  INFO(m.out.str());
  const std::string report = m.out.str();
  const std::size_t line = report.find("\n  " + days[0] + " ");
  REQUIRE(line != std::string::npos);
  CHECK(report.substr(line, report.find('\n', line + 1) - line).find("DIFFERENT VALUES") != std::string::npos);
  CHECK(report.find("DIFFERENT") == report.find("DIFFERENT VALUES", line));
  ReconcileOptions reconcile;
  reconcile.pipeline = "shop";
  reconcile.table = "daily_revenue";
  CHECK(m.run(run_reconcile, reconcile) == 0);
  CHECK(m.mart("daily_revenue") == m.expected());
  std::ostringstream().swap(m.out);
  CHECK(m.run(run_verify, verify) == 0);
}

TEST_CASE("marts: a mart built from what tidemark loads waits for its input, then is written from complete rows") {
  Marts m;
  REQUIRE(m.run_table("shop", "orders") == 0);
  const std::string yesterday = day(m.env, 1);
  // As at 00:05 today, before the input's next run: it has loaded up to
  // 22:00 yesterday, and yesterday's last order is not in the warehouse yet.
  REQUIRE(m.rewind(yesterday + "T22:00:00Z", "as before the input's last run") == 0);
  m.env.target().exec("delete from raw.orders where updated_at >= '" + yesterday + " 22:00+00'");

  REQUIRE(m.run_table("marts", "wh_revenue") == 0);
  const auto written = m.mart("wh_revenue");
  REQUIRE(written.size() == 4);  // five days ago up to the day before yesterday
  const auto want = m.expected();
  CHECK(std::vector<std::string>(want.begin(), want.begin() + 4) == written);
  const auto status = m.status_of("marts", "wh_revenue");
  CHECK(status["why"]["reason"] == "waiting");
  CHECK(status["why"]["held_by"] == "waiting for shop.orders, at " + yesterday + "T22:00:00Z");
  CHECK(status["why"]["text"].get<std::string>().rfind(
            "waiting for shop.orders, at " + yesterday + "T22:00:00Z (a complete partition waits, for ", 0) == 0);
  CHECK(m.state("select count(*) from tidemark.runs where table_name = 'wh_revenue' and input_wait_seconds > 0")[0] ==
        "1");
  // history shows the firing that waited, and what for.
  HistoryOptions history;
  history.pipeline = "marts";
  std::ostringstream().swap(m.out);
  REQUIRE(m.run(run_history, history) == 0);
  CHECK(m.out.str().find("success  ") != std::string::npos);
  CHECK(m.out.str().find("waiting for shop.orders, at " + yesterday + "T22:00:00Z") != std::string::npos);

  // The input's run loads the rest; the mart's next firing writes yesterday.
  REQUIRE(m.run_table("shop", "orders") == 0);
  REQUIRE(m.run_table("marts", "wh_revenue") == 0);
  CHECK(m.mart("wh_revenue") == m.expected());
  CHECK(m.status_of("marts", "wh_revenue")["why"].is_null());
}

TEST_CASE("marts: a rewind of the input or a reconcile that repairs it makes the mart check its done partitions again") {
  Marts m;
  REQUIRE(m.run_table("shop", "orders") == 0);
  REQUIRE(m.run_table("marts", "wh_revenue") == 0);
  REQUIRE(m.mart("wh_revenue") == m.expected());
  const std::string four_days_ago = day(m.env, 4);

  m.change_unseen(four_days_ago);
  REQUIRE(m.run_table("shop", "orders") == 0);
  REQUIRE(m.run_table("marts", "wh_revenue") == 0);
  CHECK(m.mart("wh_revenue") != m.expected());

  // The operator rewinds the input to read those days again: the mart's
  // done partitions that end after it are flagged, and say why.
  std::ostringstream().swap(m.out);
  REQUIRE(m.rewind(four_days_ago + "T00:00:00Z", "re-read a change the cursor missed") == 0);
  CHECK(m.out.str().find("dependent marts.wh_revenue: its done partitions are checked again, each once this table "
                         "has passed its end again") != std::string::npos);
  // Which of them read the rows its cursor does not tell (the mart is by
  // when an order was placed): all five.
  CHECK(m.state("select count(*) from tidemark.partitions where table_name = 'wh_revenue' and recheck = "
                "'input shop.orders rewound to " + four_days_ago + "T00:00:00Z'")[0] == "5");
  // Before the input has read them again, checking them would find
  // nothing: only five days ago's, which ended before the rewind's
  // value, is checked, found equal, and cleared.
  REQUIRE(m.run_table("marts", "wh_revenue") == 0);
  CHECK(m.state("select count(*) from tidemark.partitions where recheck is not null")[0] == "4");
  CHECK(m.mart("wh_revenue") != m.expected());

  REQUIRE(m.run_table("shop", "orders") == 0);
  REQUIRE(m.run_table("marts", "wh_revenue") == 0);
  CHECK(m.mart("wh_revenue") == m.expected());
  CHECK(m.state("select count(*) from tidemark.partitions where recheck is not null")[0] == "0");
  CHECK(m.state("select rewrite_reason from tidemark.runs where rewrite_reason is not null") ==
        std::vector<std::string>{"input shop.orders rewound to " + four_days_ago +
                                 "T00:00:00Z: the query returns other values in 1 row"});

  // An order refunded three days ago, deleted where no cursor sees it: a
  // reconcile of the input removes it from the warehouse, and the mart
  // checks its days again at its next firing.
  const std::string three_days_ago = day(m.env, 3);
  m.env.source().exec("delete from orders where order_id = (select min(order_id) from orders"
                      " where status = 'completed' and ordered_at::date = '" + three_days_ago + "')");
  ReconcileOptions reconcile;
  reconcile.pipeline = "shop";
  reconcile.table = "orders";
  REQUIRE(m.run(run_reconcile, reconcile) == 0);
  CHECK(m.state("select count(*) from tidemark.partitions where recheck = 'input shop.orders repaired by reconcile'")[0] ==
        "5");
  REQUIRE(m.run_table("marts", "wh_revenue") == 0);
  CHECK(m.mart("wh_revenue") == m.expected());
  CHECK(m.state("select count(*) from tidemark.partitions where recheck is not null")[0] == "0");
}

TEST_CASE("marts: a backfill of the input makes the mart check its done partitions again, and wakes it") {
  Marts m;
  REQUIRE(m.run_table("shop", "orders") == 0);
  REQUIRE(m.run_table("marts", "wh_revenue") == 0);
  REQUIRE(m.mart("wh_revenue") == m.expected());
  const std::string four_days_ago = day(m.env, 4);
  const std::string three_days_ago = day(m.env, 3);
  m.change_unseen(four_days_ago);

  // The operator copies those days again, below the watermark: the mart's
  // done partitions are flagged, and the fleet is told at once.
  m.env.state().exec("listen tidemark_moved");
  BackfillOptions backfill;
  backfill.pipeline = "shop";
  backfill.table = "orders";
  backfill.from = four_days_ago;
  backfill.to = three_days_ago;
  std::ostringstream().swap(m.out);
  REQUIRE(m.run(run_backfill, backfill) == 0);
  CHECK(m.out.str().find("dependent marts.wh_revenue: its done partitions are checked again at its next firing") !=
        std::string::npos);
  const auto told = m.env.state().wait_for_notifications(std::chrono::seconds(5));
  CHECK(told == std::vector<std::string>{R"(["shop","orders"])"});
  m.env.state().exec("unlisten tidemark_moved");
  CHECK(m.state("select count(*) from tidemark.partitions where table_name = 'wh_revenue' and recheck = "
                "'input shop.orders backfilled from " + four_days_ago + " to " + three_days_ago + "'")[0] == "5");

  REQUIRE(m.run_table("marts", "wh_revenue") == 0);
  CHECK(m.mart("wh_revenue") == m.expected());
  CHECK(m.state("select count(*) from tidemark.partitions where recheck is not null")[0] == "0");
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("marts: validate refuses inputs an id bounds, and a wall-clock input read in another zone, where named") {
  PgTestEnv env;
  env.source().exec(
      "create table events (id bigint primary key, at timestamp not null);"
      "create table orders (order_id int primary key, updated_at timestamptz not null)");
  env.target().exec("create table events (id bigint primary key, at timestamp not null);"
                    "create table orders (order_id int primary key, updated_at timestamptz not null);"
                    "create table daily (day date primary key, n bigint not null)");
  const std::string zone = PgTestEnv::rows(env.source(), "select current_setting('TimeZone')").at(0);
  const std::string other_zone = zone == "Pacific/Auckland" ? "Asia/Tokyo" : "Pacific/Auckland";
  const std::string shop = R"(pipeline: shop
source: source
target: target
schedule: "@daily"
timezone: )" + other_zone + R"(
tables:
  - { name: by_id, source_table: events, target_table: events, key: [id], cursor: id }
  - { name: by_time, source_table: events, target_table: events, key: [id], cursor: at }
  - { name: orders, source_table: orders, target_table: orders, key: [order_id], cursor: updated_at }
)";
  const std::string marts = R"(pipeline: marts
source: target
target: target
schedule: "@daily"
tables:
  - name: daily
    mode: partition
    partition: { column: day }
    query: "select $1::date as day, count(*) as n from orders where updated_at >= $1 and updated_at < $2"
    target_table: daily
    inputs: [shop.orders, shop.by_id, shop.by_time]
)";
  ValidateOptions validate;
  validate.config_path = env.write_config_files({shop, marts});
  std::ostringstream out;
  std::ostringstream err;
  CHECK(run_validate(validate, Instant{}, out, err) == 2);
  const std::string errors = err.str();
  INFO(errors);
  CHECK(errors.find("pipeline2.yaml:11:27: tables[0].inputs[1]: input shop.by_id has an integer cursor") !=
        std::string::npos);
  CHECK(errors.find("pipeline2.yaml:11:39: tables[0].inputs[2]: input shop.by_time has a timestamp cursor, whose "
                    "watermark is a wall-clock value of its source's time zone (" + zone + "), but pipeline shop "
                    "reads it in " + other_zone + ": set timezone: " + zone + " on pipeline shop") !=
        std::string::npos);
  CHECK(errors.find("shop.orders") == std::string::npos);
  CHECK(errors.find("2 errors found") != std::string::npos);
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("marts: with the state in a database of its own, a reconcile of the input flags the mart, which mends it") {
  Marts m(/*state_in_target=*/false);
  REQUIRE(m.run_table("shop", "orders") == 0);
  REQUIRE(m.run_table("marts", "wh_revenue") == 0);
  REQUIRE(m.mart("wh_revenue") == m.expected());
  m.env.source().exec("delete from orders where order_id = (select min(order_id) from orders"
                      " where status = 'completed' and ordered_at::date = '" + day(m.env, 2) + "')");
  ReconcileOptions reconcile;
  reconcile.pipeline = "shop";
  reconcile.table = "orders";
  REQUIRE(m.run(run_reconcile, reconcile) == 0);
  // Flagged before the warehouse committed the repair, and again after.
  CHECK(m.state("select count(*) from tidemark.partitions where recheck = 'input shop.orders repaired by reconcile'")[0] ==
        "5");
  CHECK(m.state("select changes from tidemark.input_changes where table_name = 'wh_revenue'")[0] == "2");
  REQUIRE(m.run_table("marts", "wh_revenue") == 0);
  CHECK(m.mart("wh_revenue") == m.expected());
  CHECK(m.state("select count(*) from tidemark.partitions where recheck is not null")[0] == "0");
}

}  // namespace tidemark
