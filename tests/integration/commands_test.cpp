// The state commands (run, status, history, rewind) end to end, through
// the same functions the binary calls, against a real PostgreSQL.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "core/run/table_key.h"
#include "daemon/commands/commands.h"
#include "pg_test_env.h"

namespace tidemark {
namespace {

using testing::PgTestEnv;

const char* const kCommandsPipeline = R"(pipeline: shop
source: source
target: target
schedule: "*/5 * * * *"
stale_after: 1h
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
    lookback: 1h
  - name: events
    source_table: public.events
    target_table: raw.events
    key: [event_id]
    cursor: event_id
    lookback: 10
)";

struct Commands : testing::CommandRunner {
  PgTestEnv env;

  Commands() {
    env.source().exec(
        "create table public.orders (order_id int primary key, updated_at timestamptz not null);"
        "insert into public.orders select g, timestamptz '2026-01-01' + g * interval '1 hour'"
        " from generate_series(1, 48) g;"
        "create table public.events (event_id bigint primary key, kind text);"
        "insert into public.events select g, 'e' from generate_series(1, 100) g");
    env.target().exec(
        "create schema raw; create table raw.orders (order_id int primary key, updated_at timestamptz not null);"
        "create table raw.events (event_id bigint primary key, kind text)");
    config_path = env.write_config_files(kCommandsPipeline);
  }
};

}  // namespace

TEST_CASE("run, then status and history show every table, in text and JSON") {
  Commands c;
  RunOptions run;
  run.pipeline = "shop";
  REQUIRE(c.run(run_run, run) == 0);

  StatusOptions status_json;
  status_json.json = true;
  REQUIRE(c.run(run_status, status_json) == 0);
  const auto status = nlohmann::json::parse(c.out.str());
  REQUIRE(status.size() == 2);
  CHECK(status[0]["table"] == "orders");
  CHECK(status[0]["value_type"] == "timestamptz");
  CHECK(status[0]["stale_after_seconds"] == 3600);
  CHECK(status[0]["last_run"]["status"] == "success");
  CHECK(status[0]["last_run"]["rows_written"] == 48);
  CHECK(status[1]["watermark"] == "101");
  CHECK(status[1]["stale"] == false);

  HistoryOptions history_json;
  history_json.json = true;
  REQUIRE(c.run(run_history, history_json) == 0);
  const auto history = nlohmann::json::parse(c.out.str());
  REQUIRE(history.size() == 2);
  CHECK(history[0]["table"] == "events");  // newest first
  CHECK(history[0]["window_lo"] == "1");
  CHECK(history[0]["window_hi"] == "101");
  CHECK(history[0]["trigger"] == "manual");

  REQUIRE(c.run(run_status, StatusOptions{}) == 0);
  CHECK(c.out.str().find("orders") != std::string::npos);
  CHECK(c.out.str().find("#2 success") != std::string::npos);
}

TEST_CASE("status and history before any run show the configured tables and create nothing") {
  Commands c;
  REQUIRE(c.run(run_status, StatusOptions{}) == 0);
  CHECK(c.err.str().find("no tidemark state yet") != std::string::npos);
  CHECK(c.out.str().find("never") != std::string::npos);
  REQUIRE(c.run(run_history, HistoryOptions{}) == 0);
  CHECK(PgTestEnv::rows(c.env.state(), "select to_regnamespace('tidemark') is null")[0] == "t");
}

TEST_CASE("run exits 2 for an unknown pipeline or table, 1 when a run fails") {
  Commands c;
  RunOptions run;
  run.pipeline = "nope";
  CHECK(c.run(run_run, run) == 2);
  run.pipeline = "shop";
  run.table = "nope";
  CHECK(c.run(run_run, run) == 2);
  c.env.target().exec("drop table raw.events");
  run.table = "events";
  CHECK(c.run(run_run, run) == 1);
}

TEST_CASE("rewind refuses without a reason, can be dry, is audited, and sets a first watermark") {
  Commands c;
  RewindOptions rewind;
  rewind.pipeline = "shop";
  rewind.table = "orders";
  rewind.to = "2026-01-02T00:00:00Z";
  rewind.reason = "  ";
  CHECK(c.run(run_rewind, rewind) == 2);
  CHECK(c.err.str().find("--reason") != std::string::npos);

  // A first watermark for a table that has none; dry run first.
  rewind.reason = "start from the second day";
  rewind.dry_run = true;
  REQUIRE(c.run(run_rewind, rewind) == 0);
  // lookback 1h: rows with updated_at >= 2026-01-01T23:00 are hours 23..48.
  CHECK(c.out.str().find("re-reads 26 source rows") != std::string::npos);
  CHECK(PgTestEnv::rows(c.env.state(), "select count(*) from tidemark.watermarks")[0] == "0");

  rewind.dry_run = false;
  REQUIRE(c.run(run_rewind, rewind) == 0);
  CHECK(PgTestEnv::rows(c.env.state(), "select value from tidemark.watermarks")[0] == "2026-01-02T00:00:00Z");
  auto audit = PgTestEnv::rows(c.env.state(),
                               "select old_value, new_value, reason, reset_by <> '' from tidemark.watermark_resets");
  REQUIRE(audit.size() == 1);
  CHECK(audit[0] == "NULL|2026-01-02T00:00:00Z|start from the second day|t");

  // The next run reads from the rewound value minus the lookback.
  RunOptions run;
  run.pipeline = "shop";
  REQUIRE(c.run(run_run, run) == 0);
  CHECK(PgTestEnv::rows(c.env.target(), "select count(*) from raw.orders")[0] == "26");

  // A rewind while a run holds the lock is refused.
  rewind.to = "2026-01-01T00:00:00Z";
  PgConnection holder(testing::test_dsn(PgTestEnv::rows(c.env.state(), "select current_database()")[0]), "holder");
  holder.exec("select pg_advisory_lock($1::bigint)", {std::to_string(advisory_lock_key({"shop", "orders"}))});
  CHECK(c.run(run_rewind, rewind) == 1);
  holder.exec("select pg_advisory_unlock_all()");
  REQUIRE(c.run(run_rewind, rewind) == 0);
  audit = PgTestEnv::rows(c.env.state(), "select old_value, new_value from tidemark.watermark_resets order by 1");
  CHECK(audit.size() == 2);
}

TEST_CASE("backfill on an incremental table re-reads a cursor range without moving the watermark") {
  Commands c;
  RunOptions run;
  run.pipeline = "shop";
  REQUIRE(c.run(run_run, run) == 0);
  const auto watermark = PgTestEnv::rows(c.env.state(), "select value from tidemark.watermarks order by 1");
  // Rows changed in the source without touching the cursor: only a backfill finds them.
  c.env.source().exec("delete from public.events where event_id between 20 and 29");
  c.env.target().exec("update raw.events set kind = 'stale' where event_id between 1 and 50");
  BackfillOptions backfill;
  backfill.pipeline = "shop";
  backfill.table = "events";
  backfill.from = "1";
  backfill.to = "41";
  REQUIRE(c.run(run_backfill, backfill) == 0);
  CHECK(c.out.str().find("rows read 30, written 30") != std::string::npos);
  CHECK(PgTestEnv::rows(c.env.target(), "select count(*) from raw.events where kind = 'stale'")[0] == "20");
  CHECK(PgTestEnv::rows(c.env.state(), "select value from tidemark.watermarks order by 1") == watermark);
  // Its run row shows the watermark it found, and left as it was.
  CHECK(PgTestEnv::rows(c.env.state(), "select trigger, window_lo, window_hi, watermark_before = w.value"
                                       " and watermark_after = w.value from tidemark.runs r join tidemark.watermarks w"
                                       " using (pipeline, table_name) order by run_id desc limit 1")[0] ==
        "backfill|1|41|t");
}

TEST_CASE("verify compares counts and checksums over the lookback window") {
  Commands c;
  RunOptions run;
  run.pipeline = "shop";
  REQUIRE(c.run(run_run, run) == 0);
  VerifyOptions verify;
  verify.pipeline = "shop";
  verify.table = "events";
  REQUIRE(c.run(run_verify, verify) == 0);
  CHECK(c.out.str().find("[91, 101)") != std::string::npos);
  CHECK(c.out.str().find("all                    10           10  ok") != std::string::npos);

  c.env.target().exec("update raw.events set kind = 'x' where event_id = 95");
  CHECK(c.run(run_verify, verify) == 1);
  CHECK(c.out.str().find("DIFFERENT VALUES") != std::string::npos);
  c.env.target().exec("delete from raw.events where event_id = 95");
  CHECK(c.run(run_verify, verify) == 1);
  CHECK(c.out.str().find("DIFFERENT COUNT") != std::string::npos);
}

TEST_CASE("verify --keys names the first N keys that differ in each day that differs, and what they are") {
  Commands c;
  // Rows inside the time cursor's window (the hour below the watermark).
  c.env.source().exec("insert into public.orders values (101, now() - interval '3 minutes'),"
                      " (102, now() - interval '2 minutes')");
  RunOptions run;
  run.pipeline = "shop";
  REQUIRE(c.run(run_run, run) == 0);
  // Integer cursor, one bucket: two rows changed, one lost.
  c.env.target().exec(
      "update raw.events set kind = 'x' where event_id in (93, 97); delete from raw.events where event_id = 95");
  VerifyOptions verify;
  verify.pipeline = "shop";
  verify.table = "events";
  verify.keys = 2;
  CHECK(c.run(run_verify, verify) == 1);
  const std::string events = c.out.str();
  CHECK(events.find("DIFFERENT COUNT") != std::string::npos);
  CHECK(events.find("1 missing from the target, 2 with other values, 0 only in the target") != std::string::npos);
  CHECK(events.find("missing or other values: (93) (95)\n") != std::string::npos);  // the first 2, in key order

  // A time cursor: only the day that differs lists its keys.
  c.out.str("");
  c.env.target().exec("update raw.orders set updated_at = updated_at + interval '1 microsecond' where order_id = 102;"
                      "insert into raw.orders select 1000, updated_at from raw.orders where order_id = 102");
  verify.table = "orders";
  verify.keys = 5;
  CHECK(c.run(run_verify, verify) == 1);
  const std::string orders = c.out.str();
  CAPTURE(orders);
  CHECK(orders.find("ok\n    ") == std::string::npos);  // a day that matches lists nothing
  CHECK(orders.find("0 missing from the target, 1 with other values, 1 only in the target") != std::string::npos);
  CHECK(orders.find("missing or other values: (102)\n") != std::string::npos);
  CHECK(orders.find("only in the target: (1000)\n") != std::string::npos);
  // Without --keys, counts and checksums only.
  c.out.str("");
  verify.keys = 0;
  CHECK(c.run(run_verify, verify) == 1);
  CHECK(c.out.str().find("only in the target") == std::string::npos);
}

TEST_CASE("rewind rejects a value that is not of the cursor's type") {
  Commands c;
  RewindOptions rewind;
  rewind.pipeline = "shop";
  rewind.table = "events";
  rewind.to = "2026-01-01";
  rewind.reason = "test";
  CHECK(c.run(run_rewind, rewind) == 2);
  CHECK(c.err.str().find("\"2026-01-01\" is not a valid integer value: expected an integer") != std::string::npos);
}

TEST_CASE("rewind refuses a value past the source's clock unless forced, and audits a forced one") {
  Commands c;
  REQUIRE(c.run(run_migrate, MigrateOptions{}) == 0);
  RewindOptions rewind;
  rewind.pipeline = "shop";
  rewind.table = "orders";
  rewind.reason = "clock check";
  rewind.to = "2999-01-01T00:00:00Z";
  CHECK(c.run(run_rewind, rewind) == 2);
  CHECK(c.err.str().find("is past the source's clock") != std::string::npos);
  CHECK(c.err.str().find("--force") != std::string::npos);
  rewind.dry_run = true;
  CHECK(c.run(run_rewind, rewind) == 2);
  CHECK(PgTestEnv::rows(c.env.state(), "select count(*) from tidemark.watermark_resets")[0] == "0");

  rewind.dry_run = false;
  rewind.force = true;
  REQUIRE(c.run(run_rewind, rewind) == 0);
  CHECK(c.out.str().find("warning: forced: 2999-01-01T00:00:00Z is past the source's clock") != std::string::npos);
  CHECK(c.out.str().find("as forced past the source clock") != std::string::npos);
  CHECK(PgTestEnv::rows(c.env.state(), "select new_value, reason from tidemark.watermark_resets") ==
        std::vector<std::string>{"2999-01-01T00:00:00Z|clock check [forced past the source clock]"});

  // A value in the past needs no --force, and is not recorded as forced.
  rewind.force = false;
  rewind.to = "2026-01-02T00:00:00Z";
  REQUIRE(c.run(run_rewind, rewind) == 0);
  CHECK(PgTestEnv::rows(c.env.state(), "select reason from tidemark.watermark_resets order by reset_id desc limit 1")[0] ==
        "clock check");
  // Integer cursors have no clock to pass.
  rewind.table = "events";
  rewind.to = "1000000";
  CHECK(c.run(run_rewind, rewind) == 0);
}

TEST_CASE("rewind compares a timestamp cursor with the source's clock in the source's time zone") {
  Commands c;
  // The source's sessions are 14 hours ahead of UTC.
  c.env.source().exec("create table public.visits (visit_id int primary key, seen_at timestamp not null)");
  c.env.source().exec("alter database " + PgTestEnv::rows(c.env.source(), "select current_database()")[0] +
                      " set timezone = 'Pacific/Kiritimati'");
  c.env.target().exec("create table raw.visits (visit_id int primary key, seen_at timestamp not null)");
  c.config_path = c.env.write_config_files(std::string(kCommandsPipeline) + R"(  - name: visits
    source_table: public.visits
    target_table: raw.visits
    key: [visit_id]
    cursor: seen_at
)");
  RewindOptions rewind;
  rewind.pipeline = "shop";
  rewind.table = "visits";
  rewind.reason = "time zones";
  const auto utc_in = [&](int hours) {
    return PgTestEnv::rows(c.env.source(), "select to_char(now() at time zone 'UTC' + interval '" +
                                               std::to_string(hours) + " hours', 'YYYY-MM-DD\"T\"HH24:MI:SS')")[0];
  };
  // UTC wall time + 7h is past a UTC clock but not past the source's.
  rewind.to = utc_in(7);
  CHECK(c.run(run_rewind, rewind) == 0);
  rewind.to = utc_in(15);
  CHECK(c.run(run_rewind, rewind) == 2);
  CHECK(c.err.str().find("is past the source's clock") != std::string::npos);
}

}  // namespace tidemark
