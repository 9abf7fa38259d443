// `tidemark status` says why a table is stale or failing (the WHY column
// and `why` in --json), for every reason real runs against a real
// PostgreSQL can produce: never ran, failing (permanent and transient,
// counted since the last success), ahead, held back by a session, stale.
#include <doctest/doctest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "daemon/commands/commands.h"
#include "pg_test_env.h"

namespace tidemark {
namespace {

using testing::PgTestEnv;

// Two tables: stale_after 2s lets a test see staleness after a short wait.
const char* const kStatusReasonPipeline = R"(pipeline: shop
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
    stale_after: 2s
  - name: events
    source_table: public.events
    target_table: raw.events
    key: [event_id]
    cursor: event_id
    lookback: 10
    stale_after: 2s
)";

struct StatusFixture : testing::CommandRunner {
  PgTestEnv env;
  std::unique_ptr<testing::TableRuns> runs;

  StatusFixture() {
    env.source().exec(
        "create table public.orders (order_id int primary key, updated_at timestamptz not null);"
        "insert into public.orders select g, timestamptz '2026-01-01' + g * interval '1 hour'"
        " from generate_series(1, 48) g;"
        "create table public.events (event_id bigint primary key, kind text);"
        "insert into public.events select g, 'e' from generate_series(1, 100) g");
    env.target().exec(
        "create schema raw; create table raw.orders (order_id int primary key, updated_at timestamptz not null);"
        "create table raw.events (event_id bigint primary key, kind text)");
    config_path = env.write_config_files(kStatusReasonPipeline);
    runs = std::make_unique<testing::TableRuns>(env, env.config(kStatusReasonPipeline));
  }

  RunStatus run(const std::string& table, std::function<void(ChunkStep)> hook = nullptr) {
    return runs->run("shop", table, RunTrigger::Manual, std::move(hook)).summary.status;
  }

  // `status --json`, as a map from table name to its row.
  std::map<std::string, nlohmann::json> status_json() {
    StatusOptions options;
    options.json = true;
    REQUIRE(CommandRunner::run(run_status, options) == 0);
    std::map<std::string, nlohmann::json> by_table;
    for (const auto& row : nlohmann::json::parse(out_text())) by_table[row["table"].get<std::string>()] = row;
    return by_table;
  }

  // The text form's line of `table`.
  std::string status_line(const std::string& table) {
    REQUIRE(CommandRunner::run(run_status, StatusOptions{}) == 0);
    std::istringstream lines(out_text());
    std::string line;
    while (std::getline(lines, line)) {
      if (line.rfind("shop                 " + table + " ", 0) == 0) return line;
    }
    FAIL("no status line for " << table << " in:\n" << out_text());
    return "";
  }

  std::string out_text() const { return out.str(); }
};

void sleep_seconds(double seconds) { std::this_thread::sleep_for(std::chrono::duration<double>(seconds)); }

}  // namespace

TEST_CASE("status: never ran before any run; nothing to say once a run succeeded") {
  StatusFixture s;
  auto rows = s.status_json();
  CHECK(rows["orders"]["why"]["reason"] == "never_ran");
  CHECK(rows["orders"]["why"]["text"] == "never ran");
  CHECK(s.status_line("events").find("never ran") != std::string::npos);

  REQUIRE(s.run("orders") == RunStatus::Success);
  rows = s.status_json();
  CHECK(rows["orders"]["why"].is_null());
  CHECK(rows["orders"]["stale"] == false);
  CHECK(rows["events"]["why"]["reason"] == "never_ran");
  // The existing keys are all still there.
  for (const char* key : {"pipeline", "table", "mode", "watermark", "value_type", "moved_at", "age_seconds",
                          "stale_after_seconds", "ahead", "stale", "horizon", "null_cursor_rows", "last_run"}) {
    CHECK(rows["orders"].contains(key));
  }
}

TEST_CASE("status: failing since the first failure after the last success, with the count, kind and error") {
  StatusFixture s;
  REQUIRE(s.run("events") == RunStatus::Success);
  s.env.target().exec("drop table raw.events");
  REQUIRE(s.run("events") == RunStatus::Failed);
  REQUIRE(s.run("events") == RunStatus::Failed);
  // Both failures are recorded as permanent (a missing relation).
  CHECK(PgTestEnv::rows(s.env.state(), "select status, coalesce(error_kind, '-') from tidemark.runs order by run_id") ==
        std::vector<std::string>{"success|-", "failed|permanent", "failed|permanent"});
  HistoryOptions history;
  history.json = true;
  REQUIRE(s.CommandRunner::run(run_history, history) == 0);
  const auto runs = nlohmann::json::parse(s.out_text());
  REQUIRE(runs.size() == 3);
  CHECK(runs[0]["error_kind"] == "permanent");  // newest first
  CHECK(runs[2]["error_kind"].is_null());       // the success
  const std::string first_failure = PgTestEnv::rows(
      s.env.state(),
      "select to_char(to_timestamp(round(extract(epoch from min(finished_at)))) at time zone 'UTC',"
      " 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') from tidemark.runs where status = 'failed'")[0];

  auto rows = s.status_json();
  const auto& why = rows["events"]["why"];
  CHECK(why["reason"] == "failing");
  CHECK(why["failures"] == 2);
  CHECK(why["since"] == first_failure);
  CHECK(why["error_kind"] == "permanent");
  CHECK(why["error"].get<std::string>().find("raw") != std::string::npos);
  CHECK(why["text"].get<std::string>().rfind("failing since " + first_failure + " (2 runs; permanent: ", 0) == 0);
  CHECK(s.status_line("events").find("failing since " + first_failure + " (2 runs; permanent: ") !=
        std::string::npos);

  // Fixed: a success clears it; a later failure counts from that success.
  s.env.target().exec("create table raw.events (event_id bigint primary key, kind text)");
  REQUIRE(s.run("events") == RunStatus::Success);
  CHECK(s.status_json()["events"]["why"].is_null());
  s.env.target().exec("drop table raw.events");
  REQUIRE(s.run("events") == RunStatus::Failed);
  CHECK(s.status_json()["events"]["why"]["failures"] == 1);
}

TEST_CASE("status: a lost source session is a transient failure") {
  StatusFixture s;
  const std::string own_pid = PgTestEnv::rows(s.env.source(), "select pg_backend_pid()")[0];
  const RunStatus status = s.run("orders", [&](ChunkStep step) {
    if (step != ChunkStep::BeforeTargetWrite) return;
    // Every session of the source database but this test's own: the run's.
    s.env.source().exec("select pg_terminate_backend(pid) from pg_stat_activity"
                        " where datname = current_database() and pid <> " + own_pid);
  });
  REQUIRE(status == RunStatus::Failed);
  const auto why = s.status_json()["orders"]["why"];
  CHECK(why["reason"] == "failing");
  CHECK(why["failures"] == 1);
  CHECK(why["error_kind"] == "transient");
  CHECK(why["text"].get<std::string>().find("(1 run; transient: ") != std::string::npos);
}

TEST_CASE("status: ahead of the clock after a rewind into the future, ahead of the source after a run") {
  StatusFixture s;
  REQUIRE(s.CommandRunner::run(run_migrate, MigrateOptions{}) == 0);
  RewindOptions rewind;
  rewind.pipeline = "shop";
  rewind.table = "orders";
  rewind.to = "2999-01-01T00:00:00Z";
  rewind.reason = "test";
  rewind.force = true;
  REQUIRE(s.CommandRunner::run(run_rewind, rewind) == 0);
  // No run yet, but being ahead is the more urgent thing to say.
  auto why = s.status_json()["orders"]["why"];
  CHECK(why["reason"] == "ahead");
  CHECK(why["text"].get<std::string>().rfind("ahead of the source: the watermark is ", 0) == 0);
  CHECK(why["text"].get<std::string>().find("past the state database's clock") != std::string::npos);

  REQUIRE(s.run("orders") == RunStatus::Success);
  why = s.status_json()["orders"]["why"];
  CHECK(why["reason"] == "ahead");
  CHECK(why["text"].get<std::string>().rfind(
            "ahead of the source: the stored watermark 2999-01-01T00:00:00Z is ahead of the source's safe horizon", 0) ==
        0);
  CHECK(why["held_by"].get<std::string>().find("2999-01-01T00:00:00Z") != std::string::npos);
}

TEST_CASE("status: held back by a session that keeps a transaction open on the source") {
  StatusFixture s;
  PgConnection writer(s.env.dsn("source"), "writer");
  writer.exec("set application_name = 'slow writer'");
  writer.exec("begin");
  writer.exec("select now()");
  sleep_seconds(3);  // longer than stale_after: 2s
  REQUIRE(s.run("orders") == RunStatus::Success);
  const auto why = s.status_json()["orders"]["why"];
  CHECK(why["reason"] == "held_back");
  CHECK(why["text"].get<std::string>().rfind("held back by pid ", 0) == 0);
  CHECK(why["held_by"].get<std::string>().find("slow writer, idle in transaction") != std::string::npos);
  CHECK(s.status_line("orders").find("held back by pid ") != std::string::npos);

  // Ended: the next run catches up and there is nothing to say.
  writer.exec("rollback");
  sleep_seconds(1.1);  // past the horizon's start-report margin
  REQUIRE(s.run("orders") == RunStatus::Success);
  CHECK(s.status_json()["orders"]["why"].is_null());
}

TEST_CASE("status: stale with nothing holding it: no success for too long, or no new rows") {
  StatusFixture s;
  REQUIRE(s.run("orders") == RunStatus::Success);
  REQUIRE(s.run("events") == RunStatus::Success);
  sleep_seconds(3);  // past stale_after: 2s
  // orders: no run since.
  auto why = s.status_json()["orders"]["why"];
  CHECK(why["reason"] == "stale");
  CHECK(why["text"].get<std::string>().rfind("stale: no run has succeeded for ", 0) == 0);
  CHECK(why["text"].get<std::string>().find("(stale_after 2s)") != std::string::npos);
  // events: a run succeeds, but no id above the watermark appeared.
  REQUIRE(s.run("events") == RunStatus::Success);
  why = s.status_json()["events"]["why"];
  CHECK(why["reason"] == "stale");
  CHECK(why["text"].get<std::string>().rfind("stale: the watermark has not moved for ", 0) == 0);
  CHECK(why["text"].get<std::string>().find("found no new rows") != std::string::npos);
  CHECK(s.status_line("events").find("stale: the watermark has not moved for ") != std::string::npos);
}

TEST_CASE("status reads a state schema the daemon has not upgraded yet: failures without a kind") {
  StatusFixture s;
  REQUIRE(s.run("events") == RunStatus::Success);
  // The schema as version 2 left it: no error_kind column.
  s.env.state().exec("alter table tidemark.runs drop column error_kind;"
                     "delete from tidemark.schema_migrations where version >= 3");
  s.env.state().exec("insert into tidemark.runs (pipeline, table_name, trigger, status, error, started_at, finished_at)"
                     " values ('shop', 'events', 'schedule', 'failed', 'connection refused', now(), now())");
  const auto why = s.status_json()["events"]["why"];
  CHECK(why["reason"] == "failing");
  CHECK(why["error_kind"].is_null());
  CHECK(why["text"].get<std::string>().find("(1 run: connection refused)") != std::string::npos);
  HistoryOptions history;
  history.json = true;
  REQUIRE(s.CommandRunner::run(run_history, history) == 0);
  CHECK(nlohmann::json::parse(s.out_text())[0]["error_kind"].is_null());
}

TEST_CASE("status reads a state schema before the kind column: a reconcile told by its trigger") {
  StatusFixture s;
  REQUIRE(s.run("events") == RunStatus::Success);
  // The schema as version 14 left it: loads and reconciles told apart only by trigger.
  s.env.state().exec("drop index tidemark.runs_kind_reconcile; drop index tidemark.runs_kind_reconcile_latest;"
                     "alter table tidemark.runs drop constraint runs_reconcile_kind;"
                     "alter table tidemark.runs drop column kind;"
                     "delete from tidemark.schema_migrations where version >= 15");
  s.env.state().exec("insert into tidemark.runs (pipeline, table_name, trigger, status, error, error_kind, started_at,"
                     " finished_at) values ('shop', 'events', 'reconcile', 'failed', 'lock timeout', 'transient',"
                     " now(), now())");
  // The failed reconcile is no load's failure: the load's state is the success before it.
  const auto events = s.status_json()["events"];
  REQUIRE(events.is_object());
  CHECK(events["why"].is_null());  // healthy; a reconcile read as a load would make it failing
  HistoryOptions history;
  history.json = true;
  REQUIRE(s.CommandRunner::run(run_history, history) == 0);
  CHECK(nlohmann::json::parse(s.out_text())[0]["trigger"] == "reconcile");
}

}  // namespace tidemark
