// An operator's commands end to end, through the functions the binary
// calls, against a real PostgreSQL: pause and resume (stored, audited,
// obeyed by `run` with a word), status's filters and summary line, and
// history's.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "core/run/cancel_token.h"
#include "daemon/commands/chunk_logger.h"
#include "daemon/commands/commands.h"
#include "daemon/pg/state/progress_book.h"
#include "daemon/pg/state/state_reader.h"
#include "daemon/serve/job_runner.h"
#include "pg_test_env.h"

namespace tidemark {
namespace {

using testing::PgTestEnv;

const char* const kOperatorPipeline = R"(pipeline: shop
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
  - name: events
    source_table: public.events
    target_table: raw.events
    key: [event_id]
    cursor: event_id
  - name: broken
    source_table: public.events
    target_table: raw.missing
    key: [event_id]
    cursor: event_id
)";

struct OperatorDesk : testing::CommandRunner {
  PgTestEnv env;

  OperatorDesk() {
    env.source().exec(
        "create table public.orders (order_id int primary key, updated_at timestamptz not null);"
        "insert into public.orders select g, timestamptz '2026-01-01' + g * interval '1 hour'"
        " from generate_series(1, 48) g;"
        "create table public.events (event_id bigint primary key, kind text);"
        "insert into public.events select g, 'e' from generate_series(1, 100) g");
    env.target().exec(
        "create schema raw; create table raw.orders (order_id int primary key, updated_at timestamptz not null);"
        "create table raw.events (event_id bigint primary key, kind text)");
    config_path = env.write_config_files(kOperatorPipeline);
  }

  // `tidemark run shop`, of one table when `table` is given: its exit code.
  int run_shop(const std::string& table = "") {
    RunOptions options;
    options.pipeline = "shop";
    options.table = table;
    return run(run_run, options);
  }

  // `status` with these options, as JSON: the tables shown, by name.
  std::vector<std::string> shown(StatusOptions options) {
    options.json = true;
    REQUIRE(run(run_status, options) == 0);
    std::vector<std::string> names;
    for (const auto& row : nlohmann::json::parse(out.str())) names.push_back(row["table"].get<std::string>());
    return names;
  }
};

// What a job's meter said when its end was told (the meter lives until then).
struct MeterAtEnd final : JobEnds {
  const RunMeter* meter = nullptr;
  std::int64_t rows = -1;
  std::int64_t bytes = -1;
  void job_started(const TableKey&, JobKind, const RunMeter& m) override { meter = &m; }
  void job_ended(const JobEnded&) override {
    rows = meter->rows();
    bytes = meter->bytes();
  }
};

PauseOptions pause_of_table(const std::string& table, const std::string& reason) {
  PauseOptions o;
  o.pipeline = "shop";
  o.table = table;
  o.reason = reason;
  return o;
}

}  // namespace

TEST_CASE("pause and resume are stored and audited; a table's resume under its pipeline's pause says it still waits") {
  OperatorDesk d;
  CHECK(d.run(run_pause, pause_of_table("orders", "  ")) == 2);  // a reason is required
  CHECK(d.run(run_pause, pause_of_table("nope", "x")) == 2);
  REQUIRE(d.run(run_pause, pause_of_table("orders", "source in maintenance")) == 0);
  CHECK(d.out.str().find("paused shop.orders since") != std::string::npos);
  REQUIRE(d.run(run_pause, pause_of_table("orders", "maintenance, until 14:00")) == 0);
  CHECK(d.out.str().find("already paused") != std::string::npos);
  REQUIRE(d.run(run_pause, pause_of_table("", "the whole shop")) == 0);
  CHECK(PgTestEnv::rows(d.env.state(), "select table_name || ':' || reason from tidemark.pauses order by 1") ==
        std::vector<std::string>{":the whole shop", "orders:maintenance, until 14:00"});

  ResumeOptions resume;
  resume.pipeline = "shop";
  resume.table = "orders";
  CHECK(d.run(run_resume, resume) == 1);  // its own pause ended; the pipeline's holds it
  CHECK(d.err.str().find("still does not fire: pipeline shop is paused") != std::string::npos);
  resume.table.clear();
  resume.catch_up = true;
  REQUIRE(d.run(run_resume, resume) == 0);
  CHECK(d.out.str().find("resumed pipeline shop") != std::string::npos);
  CHECK(PgTestEnv::rows(d.env.state(), "select count(*) from tidemark.pauses")[0] == "0");
  REQUIRE(d.run(run_resume, resume) == 0);
  CHECK(d.out.str().find("nothing to resume") != std::string::npos);
  // Who, when, why, forever: each pause and each resume, in order.
  CHECK(PgTestEnv::rows(d.env.state(),
                        "select action || ' ' || table_name || ' ' || catch_up || ' ' || (acted_by <> '')"
                        " || ' ' || (paused_since is not null) from tidemark.pause_events order by event_id") ==
        std::vector<std::string>{"pause orders false true false", "pause orders false true false",
                                 "pause  false true false", "resume orders false true true",
                                 "resume  true true true"});
}

TEST_CASE("a resume without --catch-up is the last start a restart catches up from; one with it is not") {
  OperatorDesk d;
  REQUIRE(d.run_shop("events") == 0);
  const std::vector<TableKey> tables{{"shop", "events"}, {"shop", "orders"}};
  const auto starts = [&] {
    auto read = StateReader(d.env.state()).last_run_starts(tables);
    REQUIRE(read);
    return std::move(read).value();
  };
  const JobKey events{{"shop", "events"}, JobKind::Load};
  const Instant ran = starts().at(events);
  REQUIRE(d.run(run_pause, pause_of_table("", "maintenance")) == 0);
  ResumeOptions resume;
  resume.pipeline = "shop";
  resume.catch_up = true;
  REQUIRE(d.run(run_resume, resume) == 0);
  CHECK(starts().at(events) == ran);  // --catch-up asks for the missed firings
  REQUIRE(d.run(run_pause, pause_of_table("events", "again")) == 0);
  resume.catch_up = false;
  REQUIRE(d.run(run_resume, resume) == 0);
  // That resume an hour after the run, by the audit's clock.
  d.env.state().exec("update tidemark.pause_events set acted_at = acted_at + interval '1 hour' where action = 'resume'"
                     " and not catch_up");
  CHECK(starts().at(events) > ran + std::chrono::minutes(59));
  CHECK(starts().count(JobKey{{"shop", "orders"}, JobKind::Load}) == 0);  // never ran: still waits for a firing
}

TEST_CASE("a run by hand of a paused table runs, and says the table is paused") {
  OperatorDesk d;
  REQUIRE(d.run(run_pause, pause_of_table("events", "replaying events")) == 0);
  REQUIRE(d.run_shop("events") == 0);
  CHECK(d.err.str().find("shop.events is paused since") != std::string::npos);
  CHECK(d.err.str().find("replaying events") != std::string::npos);
  CHECK(PgTestEnv::rows(d.env.state(), "select value from tidemark.watermarks where table_name = 'events'") ==
        std::vector<std::string>{"101"});
}

TEST_CASE("status filters by pipeline, table glob, stale, failing, paused and waiting, and sums the tables up") {
  OperatorDesk d;
  REQUIRE(d.run_shop() == 1);  // broken's target is missing
  REQUIRE(d.run(run_pause, pause_of_table("events", "replaying events")) == 0);
  // orders is stale (its watermark set back to January), and an input
  // held its last run back.
  RewindOptions rewind;
  rewind.pipeline = "shop";
  rewind.table = "orders";
  rewind.to = "2026-01-02T00:00:00Z";
  rewind.reason = "a stale table for the filters";
  REQUIRE(d.run(run_rewind, rewind) == 0);
  d.env.state().exec(
      "update tidemark.runs set input_wait_seconds = 90"
      " where run_id = (select max(run_id) from tidemark.runs where table_name = 'orders')");

  CHECK(d.shown({}) == std::vector<std::string>{"orders", "events", "broken"});
  StatusOptions o;
  o.table = "*r*";
  CHECK(d.shown(o) == std::vector<std::string>{"orders", "broken"});
  o = {};
  o.stale = true;  // broken has no watermark to judge
  CHECK(d.shown(o) == std::vector<std::string>{"orders"});
  o = {};
  o.failing = true;
  CHECK(d.shown(o) == std::vector<std::string>{"broken"});
  o = {};
  o.paused = true;
  CHECK(d.shown(o) == std::vector<std::string>{"events"});
  o = {};
  o.waiting = true;
  CHECK(d.shown(o) == std::vector<std::string>{"orders"});
  o = {};
  o.failing = true;
  o.table = "b*";
  CHECK(d.shown(o) == std::vector<std::string>{"broken"});
  o.stale = true;  // every filter given must hold
  CHECK(d.shown(o).empty());
  o = {};
  o.pipeline = "nope";
  CHECK(d.run(run_status, o) == 2);

  o = {};
  o.paused = true;
  REQUIRE(d.run(run_status, o) == 0);
  const std::string text = d.out.str();
  CHECK(text.find("PAUSED") != std::string::npos);
  CHECK(text.find("shop.events: paused since") != std::string::npos);
  CHECK(text.find("orders") == std::string::npos);
  CHECK(text.find("3 tables: 1 stale, 1 failing, 1 paused, 0 running, 1 waiting; 1 shown") != std::string::npos);

  o.json = true;
  REQUIRE(d.run(run_status, o) == 0);
  const auto rows = nlohmann::json::parse(d.out.str());
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["paused"]["reason"] == "replaying events");
  CHECK(rows[0]["paused"]["scope"] == "table");
}

TEST_CASE("history narrows to a table glob and a status") {
  OperatorDesk d;
  REQUIRE(d.run_shop() == 1);
  HistoryOptions h;
  h.json = true;
  h.status = "failed";
  REQUIRE(d.run(run_history, h) == 0);
  auto runs = nlohmann::json::parse(d.out.str());
  REQUIRE(runs.size() == 1);
  CHECK(runs[0]["table"] == "broken");
  h.status.clear();
  h.table = "ord*";
  REQUIRE(d.run(run_history, h) == 0);
  runs = nlohmann::json::parse(d.out.str());
  REQUIRE(runs.size() == 1);
  CHECK(runs[0]["table"] == "orders");
}

TEST_CASE("a job's meter counts the rows and bytes its copy streamed, text and binary alike") {
  OperatorDesk d;
  d.env.source().exec("insert into public.events select g, repeat('x', 100) from generate_series(101, 20000) g");
  REQUIRE(d.run(run_migrate, MigrateOptions{}) == 0);
  const auto config = d.env.config(kOperatorPipeline);
  const PipelineConfig& pipeline = *config->find_pipeline("shop");
  for (const char* table : {"events", "orders"}) {
    CAPTURE(table);
    ChunkLogger chunks;
    MeterAtEnd heard;
    CancelToken cancel;
    JobRunner runner(config, chunks, sole_owner(), heard);
    const JobEnded ended = runner.run_one(load_job(pipeline, *pipeline.find_table(table), RunTrigger::Manual), cancel);
    REQUIRE_MESSAGE(ended.summary.status == RunStatus::Success, ended.summary.error);
    // A binary COPY's trailer is a message of its own: one more at most.
    CHECK(heard.rows >= ended.summary.rows_read);
    CHECK(heard.rows <= ended.summary.rows_read + 1);
    CHECK(heard.bytes > heard.rows);
  }
}

TEST_CASE("status shows a running run's rows so far and its start, once its progress is recorded") {
  OperatorDesk d;
  REQUIRE(d.run_shop("events") == 0);
  // A run in flight: its row says running; its progress is recorded from
  // outside its transaction.
  d.env.state().exec(
      "insert into tidemark.runs (pipeline, table_name, trigger, status, started_at)"
      " values ('shop', 'events', 'schedule', 'running', now() - interval '1 minute')");
  StatusOptions status;
  status.json = true;
  REQUIRE(d.run(run_status, status) == 0);
  CHECK_FALSE(nlohmann::json::parse(d.out.str())[1]["last_run"].contains("rows_so_far"));
  REQUIRE(ProgressBook(d.env.state()).write({CopyProgress{{"shop", "events"}, 1234567, 1 << 30, 0}}));
  REQUIRE(d.run(run_status, status) == 0);
  const auto events = nlohmann::json::parse(d.out.str())[1];
  CHECK(events["table"] == "events");
  CHECK(events["last_run"]["status"] == "running");
  CHECK(events["last_run"]["rows_so_far"] == 1234567);
  CHECK(events["last_run"]["bytes_so_far"] == 1 << 30);
  REQUIRE(d.run(run_status, StatusOptions{}) == 0);
  CHECK(d.out.str().find("shop.events: run #2 running since") != std::string::npos);
  CHECK(d.out.str().find("1,234,567 rows copied by") != std::string::npos);
  CHECK(d.out.str().find("1 running") != std::string::npos);
  // Progress recorded before the run began is not its own.
  d.env.state().exec("update tidemark.run_progress set updated_at = now() - interval '1 hour'");
  REQUIRE(d.run(run_status, status) == 0);
  CHECK_FALSE(nlohmann::json::parse(d.out.str())[1]["last_run"].contains("rows_so_far"));
}

}  // namespace tidemark
