// The state schema's two doors against a real PostgreSQL: the read side
// (StateReader: status, history, the gauges, serve's catch-up) and the
// store's audited rewind, whose old value is read under the table's lock.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/run/table_key.h"
#include "core/time/instant_text.h"
#include "daemon/commands/commands.h"
#include "daemon/pg/state/pg_state_store.h"
#include "daemon/pg/state/state_reader.h"
#include "daemon/pg/state/state_schema.h"
#include "daemon/serve/metrics_registry.h"
#include "daemon/serve/state_monitor.h"
#include "pg_test_env.h"

namespace tidemark {
namespace {

using testing::PgTestEnv;

const char* const kStateGatewayPipeline = R"(pipeline: shop
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
  - name: daily
    mode: partition
    partition: { column: day, unit: day }
    query: select day from days where day >= $1 and day < $2
    target_table: raw.daily
)";

struct Gateway : testing::CommandRunner {
  PgTestEnv env;

  Gateway() {
    env.source().exec(
        "create table public.orders (order_id int primary key, updated_at timestamptz not null);"
        "insert into public.orders select g, timestamptz '2026-01-01' + g * interval '1 hour'"
        " from generate_series(1, 48) g");
    env.target().exec(
        "create schema raw; create table raw.orders (order_id int primary key, updated_at timestamptz not null)");
    config_path = env.write_config_files(kStateGatewayPipeline);
    migrate_state_schema(env.state());
  }

  std::string database(PgConnection& connection) { return PgTestEnv::rows(connection, "select current_database()")[0]; }
  std::string one(const std::string& query) { return PgTestEnv::rows(env.state(), query).at(0); }
};

const TableKey kOrders{"shop", "orders"};
const TableKey kDaily{"shop", "daily"};

CursorValue instant(const char* text) {
  const auto value = cursor_from_text(CursorType::TimestampTz, text);
  REQUIRE(value);
  return *value;
}

}  // namespace

// The bug: rewind read the old value, then counted source rows and printed
// its preview, and only then took the lock; a run that moved the watermark
// in between was overwritten, and the audit row named a value that was no
// longer there.
TEST_CASE("regression: rewind read the old value before taking the lock, so its audit row could be stale") {
  Gateway g;
  RewindOptions first;
  first.pipeline = "shop";
  first.table = "orders";
  first.reason = "first watermark";
  first.to = "2026-01-02T00:00:00Z";
  REQUIRE_MESSAGE(g.run(run_rewind, first) == 0, g.err.str());

  // The rewind's source row count waits on this lock: after its preview
  // read the watermark, before it takes the table's lock.
  g.env.source().exec("begin");
  g.env.source().exec("lock table public.orders in access exclusive mode");
  testing::CommandRunner rewinding;
  rewinding.config_path = g.config_path;
  RewindOptions back = first;
  back.reason = "re-read the first day";
  back.to = "2026-01-01T00:00:00Z";
  int exit_code = -1;
  std::thread rewind([&] { exit_code = rewinding.run(run_rewind, back); });

  PgConnection watcher(testing::test_dsn("postgres"), "watcher");
  bool waiting = false;
  for (int i = 0; i < 300 && !waiting; ++i) {
    waiting = watcher
                  .exec("select count(*) > 0 from pg_stat_activity where datname = $1 and wait_event_type = 'Lock'"
                        " and query like 'select count(*) from %'",
                        {g.database(g.env.source())})
                  .boolean(0, 0);
    if (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // A run moves the watermark meanwhile, under the table's lock, as runs do.
  PgConnection run(testing::test_dsn(g.database(g.env.state())), "run");
  const std::string key = std::to_string(advisory_lock_key(kOrders));
  run.exec("select pg_advisory_lock($1::bigint)", {key});
  run.exec("update tidemark.watermarks set value = '2026-01-03T00:00:00Z', moved_at = now()"
           " where pipeline = 'shop' and table_name = 'orders'");
  run.exec("select pg_advisory_unlock($1::bigint)", {key});
  g.env.source().exec("commit");
  rewind.join();

  REQUIRE(waiting);
  CHECK(exit_code == 0);
  CHECK(rewinding.out.str().find("watermark 2026-01-02T00:00:00Z -> 2026-01-01T00:00:00Z") != std::string::npos);
  CHECK(rewinding.out.str().find("note: the watermark was 2026-01-03T00:00:00Z when the rewind took the lock") !=
        std::string::npos);
  CHECK(PgTestEnv::rows(g.env.state(), "select old_value, new_value, reason from tidemark.watermark_resets"
                                       " order by reset_id") ==
        std::vector<std::string>{"NULL|2026-01-02T00:00:00Z|first watermark",
                                 "2026-01-03T00:00:00Z|2026-01-01T00:00:00Z|re-read the first day"});
  CHECK(g.one("select value from tidemark.watermarks") == "2026-01-01T00:00:00Z");
}

TEST_CASE("the store's rewind changes nothing while a run holds the lock, and audits what it replaced") {
  Gateway g;
  PgStateStore store(g.env.state());
  const WatermarkRewind first{kOrders, instant("2026-01-02T00:00:00Z"), "first", "tester", std::nullopt};

  PgConnection holder(testing::test_dsn(g.database(g.env.state())), "holder");
  holder.exec("select pg_advisory_lock($1::bigint)", {std::to_string(advisory_lock_key(kOrders))});
  auto rewound = store.rewind_watermark(first);
  REQUIRE(rewound);
  CHECK_FALSE(rewound->done);
  CHECK(g.one("select count(*) from tidemark.watermarks") == "0");
  CHECK(g.one("select count(*) from tidemark.watermark_resets") == "0");
  holder.exec("select pg_advisory_unlock_all()");

  rewound = store.rewind_watermark(first);
  REQUIRE(rewound);
  CHECK(rewound->done);
  CHECK_FALSE(rewound->old_value);
  // Its lock ended with its transaction: a run can take the table at once.
  CHECK(holder.exec("select pg_try_advisory_lock($1::bigint)", {std::to_string(advisory_lock_key(kOrders))})
            .boolean(0, 0));
  holder.exec("select pg_advisory_unlock_all()");

  rewound = store.rewind_watermark({kOrders, instant("2026-01-01T12:00:00Z"), "second", "tester", std::nullopt});
  REQUIRE(rewound);
  CHECK(rewound->old_value == std::optional<std::string>("2026-01-02T00:00:00Z"));
  CHECK(PgTestEnv::rows(g.env.state(), "select value, value_type from tidemark.watermarks") ==
        std::vector<std::string>{"2026-01-01T12:00:00Z|timestamptz"});
  CHECK(PgTestEnv::rows(g.env.state(), "select old_value, new_value, reason, reset_by from tidemark.watermark_resets"
                                       " order by reset_id") ==
        std::vector<std::string>{"NULL|2026-01-02T00:00:00Z|first|tester",
                                 "2026-01-02T00:00:00Z|2026-01-01T12:00:00Z|second|tester"});
}

TEST_CASE("the read side: each asked table's state in order, on the state database's clock") {
  Gateway g;
  StateReader reader(g.env.state());
  REQUIRE(reader.schema_exists());
  CHECK(*reader.schema_exists());

  // A partition table stores no watermark: its done partitions make one.
  g.env.state().exec(
      "insert into tidemark.partitions (pipeline, table_name, partition_lo, partition_hi, status, run_id, updated_at)"
      " values ('shop', 'daily', '2026-01-01Z', '2026-01-02Z', 'done', 1, '2026-01-02 00:05Z'),"
      "        ('shop', 'daily', '2026-01-02Z', '2026-01-03Z', 'done', 2, '2026-01-03 00:05Z'),"
      "        ('shop', 'daily', '2026-01-03Z', '2026-01-04Z', 'failed', 3, '2026-01-04 00:05Z')");
  g.env.state().exec(
      "insert into tidemark.watermarks (pipeline, table_name, value, value_type, moved_at, updated_at)"
      " values ('shop', 'orders', '2026-01-02T00:00:00Z', 'timestamptz', '2026-01-02 00:01Z', now());"
      "insert into tidemark.runs (pipeline, table_name, trigger, status, started_at, finished_at, rows_written,"
      "  watermark_ahead, horizon_lag_seconds)"
      " values ('shop', 'orders', 'schedule', 'success', '2026-01-02 00:00Z', '2026-01-02 00:01Z', 7, false, 1.5),"
      "        ('shop', 'orders', 'schedule', 'failed', '2026-01-02 00:05Z', '2026-01-02 00:06Z', 0, true, null),"
      "        ('shop', 'orders', 'schedule', 'running', '2026-01-02 00:10Z', null, 0, false, null)");

  const double db_now = std::stod(g.one("select extract(epoch from now())::float8"));
  const auto snapshot = reader.table_states({kDaily, {"shop", "never"}, kOrders});
  REQUIRE(snapshot);
  CHECK(std::abs(snapshot->now - db_now) < 5);
  REQUIRE(snapshot->tables.size() == 3);

  const TableState& daily = snapshot->tables[0];
  CHECK(daily.table == kDaily);
  CHECK(daily.watermark == std::optional<std::string>("2026-01-03T00:00:00Z"));  // the failed partition claims nothing
  CHECK(daily.value_type == std::optional<std::string>("timestamptz"));
  CHECK(daily.watermark_unix == std::optional<double>(1767398400));
  CHECK(daily.moved_at == std::optional<double>(1767398700));

  const TableState& never = snapshot->tables[1];
  CHECK(never.table == TableKey{"shop", "never"});
  CHECK_FALSE(never.watermark);
  CHECK_FALSE(never.last_run);
  CHECK_FALSE(never.reading().moved_unix);

  const TableState& orders = snapshot->tables[2];
  CHECK(orders.watermark == std::optional<std::string>("2026-01-02T00:00:00Z"));
  CHECK(orders.watermark_unix == std::optional<double>(1767312000));
  CHECK(orders.moved_at == std::optional<double>(1767312060));
  REQUIRE(orders.last_run);
  CHECK(orders.last_run->status == "running");
  CHECK_FALSE(orders.last_run->finished_at);
  CHECK(orders.last_success_at == std::optional<double>(1767312060));
  // The latest finished run is the failed one: it found the watermark ahead.
  CHECK(orders.ahead_of_source);
  CHECK_FALSE(orders.horizon_lag_seconds);

  // No table asked: still the clock.
  const auto empty = reader.table_states({});
  REQUIRE(empty);
  CHECK(empty->tables.empty());
  CHECK(std::abs(empty->now - db_now) < 5);
}

TEST_CASE("status and the gauges judge age and stale alike, from the same state") {
  Gateway g;
  // Two hours old by the state database's clock, with stale_after 1h.
  g.env.state().exec(
      "insert into tidemark.watermarks (pipeline, table_name, value, value_type, moved_at, updated_at)"
      " select 'shop', 'orders', to_char(now() at time zone 'UTC' - interval '2 hours',"
      " 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), 'timestamptz', now(), now()");
  StatusOptions json;
  json.json = true;
  REQUIRE(g.run(run_status, json) == 0);
  const auto status = nlohmann::json::parse(g.out.str());
  REQUIRE(status.size() == 2);
  CHECK(status[0]["stale"] == true);
  CHECK(status[0]["ahead"] == false);
  const auto status_age = status[0]["age_seconds"].get<std::int64_t>();
  CHECK(status_age >= 7200);
  CHECK(status_age < 7260);
  CHECK(status[1]["watermark"].is_null());
  CHECK(status[1]["stale"] == false);

  MetricsRegistry metrics;
  const auto config = g.env.config(kStateGatewayPipeline);
  metrics.set_config(*config);
  const std::string stale_line = R"(tidemark_watermark_stale{pipeline="shop",table="orders"} 1)";
  const std::string age_series = R"(tidemark_watermark_age_seconds{pipeline="shop",table="orders"} )";
  std::string text;
  HealthState health;
  health.config_loaded(config->daemon.state);
  CHECK_FALSE(health.readiness().ok);  // not checked yet
  {
    StateMonitor monitor(metrics, health, std::chrono::seconds(1));
    monitor.start(config);
    for (int i = 0; i < 100 && text.find(stale_line) == std::string::npos; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      text = metrics.scrape_text();
    }
    monitor.stop();
  }
  CHECK(text.find(stale_line + "\n") != std::string::npos);
  // The check that read the state also made the daemon ready (/readyz).
  CHECK(health.readiness().ok);
  const auto at = text.find(age_series);
  REQUIRE(at != std::string::npos);
  const double gauge_age = std::stod(text.substr(at + age_series.size()));
  CHECK(gauge_age >= 7200);
  CHECK(std::abs(gauge_age - static_cast<double>(status_age)) < 60);
}

TEST_CASE("the read side: recent runs newest first, and last starts without backfills, a reconcile's apart") {
  Gateway g;
  g.env.state().exec(
      "insert into tidemark.runs (pipeline, table_name, trigger, status, started_at, finished_at, rows_read,"
      "  rows_written, host, pid)"
      " values ('shop', 'orders', 'schedule', 'success', '2026-01-02 00:00Z', '2026-01-02 00:00:01.5Z', 3, 2, 'h', 7),"
      "        ('shop', 'orders', 'backfill', 'success', '2026-01-03 00:00Z', '2026-01-03 00:00:02Z', 0, 0, 'h', 8),"
      "        ('other', 'events', 'manual', 'running', '2026-01-04 00:00Z', null, 0, 0, null, null)");
  StateReader reader(g.env.state());
  const auto all = reader.recent_runs(RunFilter{}, 2);
  REQUIRE(all);
  REQUIRE(all->size() == 2);
  CHECK((*all)[0].pipeline == "other");
  CHECK_FALSE((*all)[0].duration_seconds);
  CHECK_FALSE((*all)[0].pid);
  CHECK((*all)[1].trigger == "backfill");

  // history --table GLOB --status S: the glob's _ is no LIKE wildcard.
  const auto filtered = [&](std::optional<std::string> glob, std::optional<std::string> status) {
    const auto runs = reader.recent_runs(RunFilter{std::nullopt, std::move(glob), std::move(status)}, 10);
    REQUIRE(runs);
    return runs->size();
  };
  CHECK(filtered(std::string("ord*"), std::string("success")) == 2);
  CHECK(filtered(std::string("o?ders"), std::string("running")) == 0);
  CHECK(filtered(std::string("*vent*"), std::nullopt) == 1);
  CHECK(filtered(std::string("or_ers"), std::nullopt) == 0);
  CHECK(filtered(std::nullopt, std::string("running")) == 1);

  const auto shop = reader.recent_runs(RunFilter{std::string("shop"), std::nullopt, std::nullopt}, 10);
  REQUIRE(shop);
  REQUIRE(shop->size() == 2);
  const RunRecord& scheduled = (*shop)[1];
  CHECK(scheduled.started_at == "2026-01-02T00:00:00Z");
  CHECK(scheduled.duration_seconds == std::optional<double>(1.5));
  CHECK(scheduled.rows_read == 3);
  CHECK(scheduled.rows_written == 2);
  CHECK(scheduled.host == std::optional<std::string>("h"));
  CHECK(scheduled.pid == std::optional<std::int64_t>(7));

  // A reconcile's start is its own job's, not the load's, though it is the
  // newest run; with none that succeeded, the newest of any outcome.
  g.env.state().exec(
      "insert into tidemark.runs (pipeline, table_name, trigger, kind, status, started_at, finished_at)"
      " values ('shop', 'orders', 'reconcile', 'reconcile', 'failed', '2026-01-01 03:00Z', '2026-01-01 03:00:05Z')");
  const auto starts = reader.last_run_starts({{"other", "events"}, {"shop", "orders"}, {"shop", "never_ran"}});
  REQUIRE(starts);
  CHECK(*starts == LastStarts{{{"other", "events", JobKind::Load}, Instant(std::chrono::seconds(1767484800))},
                              {{"shop", "orders", JobKind::Load}, Instant(std::chrono::seconds(1767312000))},
                              {{"shop", "orders", JobKind::Reconcile}, Instant(std::chrono::seconds(1767236400))}});
  // One that failed after a success does not count: the success's start does.
  g.env.state().exec(
      "insert into tidemark.runs (pipeline, table_name, trigger, kind, status, started_at, finished_at)"
      " values ('shop', 'orders', 'reconcile', 'reconcile', 'success', '2026-01-02 03:00Z', '2026-01-02 03:00:05Z'),"
      "        ('shop', 'orders', 'reconcile', 'reconcile', 'failed', '2026-01-03 03:00Z', '2026-01-03 03:00:01Z')");
  const auto after = reader.last_run_starts({{"shop", "orders"}});
  REQUIRE(after);
  CHECK(after->at({"shop", "orders", JobKind::Reconcile}) == Instant(std::chrono::seconds(1767322800)));
  // Only the tables asked for.
  CHECK(reader.last_run_starts({{"other", "events"}})->size() == 1);
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("each run row says its kind: written by the store, taken from trigger for rows before version 15") {
  Gateway g;
  PgStateStore store(g.env.state());
  const auto reconcile = store.open_run(RunStart{kOrders, RunTrigger::Reconcile, std::nullopt});
  const auto load = store.open_run(RunStart{kOrders, RunTrigger::Startup, std::nullopt});
  REQUIRE(reconcile);
  REQUIRE(load);
  CHECK(PgTestEnv::rows(g.env.state(), "select trigger || ' ' || kind from tidemark.runs order by run_id") ==
        std::vector<std::string>{"reconcile reconcile", "startup load"});

  // A schema as version 14 left it, with a load and a reconcile, upgraded.
  g.env.state().exec(
      "delete from tidemark.runs;"
      "alter table tidemark.runs drop column kind, drop column input_wait_seconds, drop column rewrite_reason;"
      "alter table tidemark.partitions drop column recheck, drop column recheck_since;"
      "drop table tidemark.input_changes, tidemark.pauses, tidemark.pause_events,"
      "  tidemark.run_progress, tidemark.load_ranges;"
      "delete from tidemark.schema_migrations where version >= 15;"
      "insert into tidemark.runs (pipeline, table_name, trigger, status)"
      " values ('shop', 'orders', 'schedule', 'success'), ('shop', 'orders', 'reconcile', 'success')");
  CHECK(migrate_state_schema(g.env.state()) == std::vector<int>{15, 16, 17, 18});
  CHECK(PgTestEnv::rows(g.env.state(), "select trigger || ' ' || kind from tidemark.runs order by run_id") ==
        std::vector<std::string>{"schedule load", "reconcile reconcile"});

  // A writer that knows no kind cannot record a reconcile as a load.
  CHECK_THROWS_AS(g.env.state().exec("insert into tidemark.runs (pipeline, table_name, trigger, status)"
                                     " values ('shop', 'orders', 'reconcile', 'running')"),
                  PgError);
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("a flag is cleared only as it was read, and a partition done while its inputs changed is flagged") {
  Gateway g;
  PgStateStore store(g.env.state());
  const TimeWindow day1{*parse_instant("2026-01-01T00:00:00Z"), *parse_instant("2026-01-02T00:00:00Z")};
  const TimeWindow day2{*parse_instant("2026-01-02T00:00:00Z"), *parse_instant("2026-01-03T00:00:00Z")};
  // Two days of shop.daily done; reading its inputs makes its count.
  g.env.state().exec(
      "insert into tidemark.partitions (pipeline, table_name, partition_lo, partition_hi, status) values"
      " ('shop', 'daily', '2026-01-01 00:00Z', '2026-01-02 00:00Z', 'done'),"
      " ('shop', 'daily', '2026-01-02 00:00Z', '2026-01-03 00:00Z', 'done')");
  const std::vector<TableRef> inputs{TableRef{"shop", "orders", TableMode::Incremental, date::locate_zone("UTC")}};
  auto read = store.read_inputs(kDaily, inputs);
  REQUIRE(read);
  CHECK(read->changes == 0);
  CHECK_FALSE(read->inputs.at(0).watermark);

  // A rewind of shop.orders flags both, and counts a change.
  REQUIRE(store.flag_downstream(DownstreamRecheck{{kDaily}, kCalendarStart, "input shop.orders rewound"}));
  auto flags = store.flagged_partitions(kDaily);
  REQUIRE(flags);
  REQUIRE(flags->size() == 2);
  CHECK(flags->at(0).window == day1);
  CHECK(flags->at(0).because == "input shop.orders rewound");
  read = store.read_inputs(kDaily, inputs);
  REQUIRE(read);
  CHECK(read->changes == 1);

  // Flagged again after it was read: the check of what was read clears
  // nothing; a check of the new flag does.
  REQUIRE(store.flag_downstream(DownstreamRecheck{{kDaily}, day2.lo, "input shop.orders repaired by reconcile"}));
  REQUIRE(store.clear_flag(kDaily, flags->at(1)));
  CHECK(g.one("select recheck from tidemark.partitions where partition_lo = '2026-01-02 00:00Z'") ==
        "input shop.orders repaired by reconcile");
  REQUIRE(store.clear_flag(kDaily, flags->at(0)));
  CHECK(g.one("select count(*) from tidemark.partitions where recheck is not null") == "1");
  const auto again = store.flagged_partitions(kDaily);
  REQUIRE(again);
  REQUIRE(again->size() == 1);
  REQUIRE(store.clear_flag(kDaily, again->at(0)));
  CHECK(g.one("select count(*) from tidemark.partitions where recheck is not null") == "0");

  // A partition written with the count it read (2) is done and clear; one
  // written after its inputs changed again is done and flagged.
  const auto write = [&](const TimeWindow& day, std::int64_t seen) {
    REQUIRE(store.lock(RunLock{kDaily, day}, false));
    const auto run = store.open_run(RunStart{kDaily, RunTrigger::Schedule, std::nullopt});
    REQUIRE(run);
    StepRecord record;
    record.lock = RunLock{kDaily, day};
    record.run = run->run;
    record.partition_done = true;
    record.input_changes_seen = seen;
    g.env.state().exec("begin");
    const auto counted = store.count_input_changes(g.env.state(), kDaily, {});
    REQUIRE(counted);
    const auto recorded = store.record_step(g.env.state(), record, *counted);
    g.env.state().exec("commit");
    store.unlock(RunLock{kDaily, day});
    REQUIRE(recorded);
    CHECK(recorded->written);
  };
  write(day1, 2);
  CHECK(g.one("select coalesce(recheck, 'clear') from tidemark.partitions where partition_lo = '2026-01-01 00:00Z'") ==
        "clear");
  REQUIRE(store.flag_downstream(DownstreamRecheck{{kOrders}, kCalendarStart, "not this table's"}));
  write(day1, 2);
  CHECK(g.one("select coalesce(recheck, 'clear') from tidemark.partitions where partition_lo = '2026-01-01 00:00Z'") ==
        "clear");
  REQUIRE(store.flag_downstream(DownstreamRecheck{{kDaily}, day2.hi, "after both days: flags none"}));
  write(day2, 2);
  CHECK(g.one("select recheck from tidemark.partitions where partition_lo = '2026-01-02 00:00Z'") ==
        "an input changed while it was written");
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("an input's change counted while a partition is being marked done waits for it, then flags it") {
  // The flagging counts the change first, under the row lock a write
  // holds as it marks its partition done: it waits for that write's
  // commit, and its flags then see the partition done.
  Gateway g;
  PgStateStore store(g.env.state());
  const TimeWindow day{*parse_instant("2026-01-01T00:00:00Z"), *parse_instant("2026-01-02T00:00:00Z")};
  const std::vector<TableRef> inputs{TableRef{"shop", "orders", TableMode::Incremental, date::locate_zone("UTC")}};
  const auto read = store.read_inputs(kDaily, inputs);
  REQUIRE(read);
  REQUIRE(store.lock(RunLock{kDaily, day}, false));
  const auto run = store.open_run(RunStart{kDaily, RunTrigger::Schedule, std::nullopt});
  REQUIRE(run);
  StepRecord record;
  record.lock = RunLock{kDaily, day};
  record.run = run->run;
  record.partition_done = true;
  record.input_changes_seen = read->changes;
  g.env.state().exec("begin");
  const auto counted = store.count_input_changes(g.env.state(), kDaily, {});
  REQUIRE(counted);
  const auto recorded = store.record_step(g.env.state(), record, *counted);
  REQUIRE(recorded);
  REQUIRE(recorded->written);

  PgConnection other(testing::test_dsn(g.database(g.env.state())), "flagger");
  PgStateStore flagger(other);
  std::atomic<bool> flagged{false};
  std::thread rewind([&] {
    REQUIRE(flagger.flag_downstream(DownstreamRecheck{{kDaily}, kCalendarStart, "input shop.orders rewound"}));
    flagged = true;
  });
  // It waits for the write: its session waits for a lock the write holds.
  const std::string waiting = "select count(*) from pg_locks where not granted and pid = " +
                              std::to_string(other.backend_pid());
  PgConnection watcher(testing::test_dsn(g.database(g.env.state())), "watcher");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (PgTestEnv::rows(watcher, waiting).at(0) == "0" && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(PgTestEnv::rows(watcher, waiting).at(0) == "1");
  CHECK_FALSE(flagged);
  g.env.state().exec("commit");
  rewind.join();
  CHECK(flagged);
  store.unlock(RunLock{kDaily, day});
  CHECK(g.one("select recheck from tidemark.partitions where partition_lo = '2026-01-01 00:00Z'") ==
        "input shop.orders rewound");
}

}  // namespace tidemark
