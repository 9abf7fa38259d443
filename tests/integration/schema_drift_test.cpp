// Schema drift against a real PostgreSQL (docs/drift-and-deletes.md): a
// column added, dropped or retyped in the source stops the run before it
// writes, names the column and keeps the watermark; append_new_columns
// adds a new column to the target and loads it; listed columns ignore the
// rest; and a table without a stored snapshot (an upgraded deployment)
// sees no drift where its target merely differs.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "daemon/commands/commands.h"
#include "pg_test_env.h"

namespace tidemark {
namespace {

using testing::PgTestEnv;

const char* const kOrdersTable =
    "(order_id bigint primary key, status text not null, amount numeric(12,2), updated_at timestamptz not null)";

// A lookback of an hour re-reads every row the tests write, so each run
// loads them all again under whatever columns it settles on.
std::string pipeline(const std::string& on_schema_change, const std::string& columns = "") {
  return "pipeline: shop\nsource: source\ntarget: target\nschedule: \"* * * * *\"\ntables:\n"
         "  - name: orders\n    source_table: public.orders\n    target_table: raw.orders\n"
         "    key: [order_id]\n    cursor: updated_at\n    lookback: 1h\n    on_schema_change: " +
         on_schema_change + "\n" + (columns.empty() ? "" : "    columns: " + columns + "\n");
}

struct DriftFixture : testing::CommandRunner {
  PgTestEnv env;
  std::unique_ptr<testing::TableRuns> runs;

  explicit DriftFixture(const std::string& yaml, bool state_in_target = true) : env(state_in_target) {
    env.source().exec(std::string("create table public.orders ") + kOrdersTable +
                      "; insert into public.orders values (1, 'new', 10.00, clock_timestamp() - interval '5 minutes')");
    env.target().exec(std::string("create schema raw; create table raw.orders ") + kOrdersTable);
    use(yaml);
  }

  // Runs from now on with this pipeline file (a reload, as far as runs go).
  void use(const std::string& yaml) {
    config_path = env.write_config_files(yaml);
    runs = std::make_unique<testing::TableRuns>(env, env.config(yaml));
  }

  RunSummary run() { return runs->run("shop", "orders").summary; }

  std::string watermark() {
    const auto r = PgTestEnv::rows(env.state(), "select value from tidemark.watermarks where pipeline = 'shop'");
    return r.empty() ? "" : r[0];
  }
  // The latest run row's status, error and schema_drift.
  std::string last_run_row() {
    return PgTestEnv::rows(env.state(),
                           "select status, coalesce(error, ''), coalesce(schema_drift, 'NULL') from tidemark.runs"
                           " order by run_id desc limit 1")[0];
  }
  std::string snapshot() {
    const auto r = PgTestEnv::rows(
        env.state(),
        "select string_agg(c ->> 'name' || ' ' || (c ->> 'type'), ', ' order by n) from tidemark.loaded_columns,"
        " jsonb_array_elements(columns) with ordinality as t(c, n) where pipeline = 'shop' and table_name = 'orders'");
    return r.empty() ? "" : r[0];
  }
  nlohmann::json status_why() {
    StatusOptions options;
    options.json = true;
    REQUIRE(CommandRunner::run(run_status, options) == 0);
    return nlohmann::json::parse(out.str())[0]["why"];
  }
};

}  // namespace

TEST_CASE("schema drift: a column added in the source fails the run, then append_new_columns adds and loads it") {
  for (const bool state_in_target : {true, false}) {
    INFO("state in target: " << state_in_target);
    DriftFixture f(pipeline("fail"), state_in_target);
    REQUIRE(f.run().status == RunStatus::Success);
    CHECK(f.snapshot() == "order_id bigint, status text, amount numeric(12,2), updated_at timestamp with time zone");
    const std::string w1 = f.watermark();
    REQUIRE_FALSE(w1.empty());

    f.env.source().exec(
        "alter table public.orders add column note text;"
        " insert into public.orders values (2, 'new', 20.00, clock_timestamp() - interval '1 minute', 'gift')");
    RunSummary r = f.run();
    CHECK(r.status == RunStatus::Failed);
    CHECK(r.error_kind == ErrorKind::Permanent);
    CHECK(r.error == "schema drift in public.orders: added column note text");
    CHECK(r.schema_drift == true);
    CHECK(f.watermark() == w1);  // nothing committed
    CHECK(PgTestEnv::rows(f.env.target(), "select count(*) from raw.orders")[0] == "1");
    CHECK(f.last_run_row() == "failed|schema drift in public.orders: added column note text|added column note text");
    const nlohmann::json why = f.status_why();
    CHECK(why["reason"] == "schema_drift");
    CHECK(why["changes"] == "added column note text");
    CHECK(why["text"].get<std::string>().rfind("schema drift: added column note text (", 0) == 0);

    f.use(pipeline("append_new_columns"));
    r = f.run();
    INFO(r.error);
    REQUIRE(r.status == RunStatus::Success);
    CHECK(r.schema_drift == false);
    CHECK(r.appended_columns == std::vector<std::string>{"note"});
    CHECK(PgTestEnv::rows(f.env.target(),
                          "select format_type(atttypid, atttypmod), attnotnull from pg_attribute"
                          " where attrelid = 'raw.orders'::regclass and attname = 'note'") ==
          std::vector<std::string>{"text|f"});  // the source's type, nullable
    CHECK(PgTestEnv::rows(f.env.target(), "select order_id, coalesce(note, 'NULL') from raw.orders order by 1") ==
          std::vector<std::string>{"1|NULL", "2|gift"});
    CHECK(f.watermark() > w1);
    CHECK(f.snapshot() ==
          "order_id bigint, status text, amount numeric(12,2), updated_at timestamp with time zone, note text");
    CHECK(f.last_run_row() == "success||");
    CHECK(f.status_why().is_null());

    // Settled: the next run has nothing to add.
    r = f.run();
    CHECK(r.status == RunStatus::Success);
    CHECK(r.appended_columns.empty());
  }
}

TEST_CASE("regression: a column append_new_columns added stayed NULL for good in the rows loaded before it") {
  // No lookback: nothing re-reads the old rows, which the source gave a
  // value each (a volatile default rewrites the table).
  const std::string yaml =
      "pipeline: shop\nsource: source\ntarget: target\nschedule: \"* * * * *\"\ntables:\n"
      "  - name: orders\n    source_table: public.orders\n    target_table: raw.orders\n"
      "    key: [order_id]\n    cursor: updated_at\n    on_schema_change: append_new_columns\n";
  DriftFixture f(yaml);
  f.env.source().exec("insert into public.orders select g, 'old', g, clock_timestamp() - interval '2 hours'"
                      " from generate_series(2, 50) g");
  REQUIRE(f.run().status == RunStatus::Success);
  const std::string w1 = f.watermark();
  f.env.source().exec(
      "alter table public.orders add column token uuid not null default gen_random_uuid();"
      " insert into public.orders values (51, 'new', 51, clock_timestamp() - interval '1 second', default)");
  const RunSummary r = f.run();
  INFO(r.error);
  REQUIRE(r.status == RunStatus::Success);
  CHECK(r.appended_columns == std::vector<std::string>{"token"});
  const char* const rows = "select order_id, status, amount, token from %s order by 1";
  const auto of = [&](PgConnection& c, const char* table) {
    std::string sql = rows;
    sql.replace(sql.find("%s"), 2, table);
    return PgTestEnv::rows(c, sql);
  };
  CHECK(of(f.env.target(), "raw.orders") == of(f.env.source(), "public.orders"));
  CHECK(PgTestEnv::rows(f.env.target(), "select count(*) from raw.orders where token is null")[0] == "0");
  CHECK(f.watermark() > w1);
  // The next run reads only what is new again.
  const RunSummary next = f.run();
  CHECK(next.status == RunStatus::Success);
  CHECK(next.appended_columns.empty());
  CHECK(next.rows_read == 0);
}

TEST_CASE("schema drift: an added column the operator adds to the target is loaded from then on, with fail") {
  DriftFixture f(pipeline("fail"));
  REQUIRE(f.run().status == RunStatus::Success);
  f.env.source().exec(
      "alter table public.orders add column note text;"
      " update public.orders set note = 'x', updated_at = clock_timestamp() - interval '1 minute'");
  CHECK(f.run().status == RunStatus::Failed);
  f.env.target().exec("alter table raw.orders add column note text");
  const RunSummary r = f.run();
  INFO(r.error);
  CHECK(r.status == RunStatus::Success);
  CHECK(r.schema_drift == false);
  CHECK(PgTestEnv::rows(f.env.target(), "select note from raw.orders") == std::vector<std::string>{"x"});
}

TEST_CASE("schema drift: a dropped column fails with fail and with append_new_columns") {
  for (const char* mode : {"fail", "append_new_columns"}) {
    INFO(mode);
    DriftFixture f(pipeline(mode));
    REQUIRE(f.run().status == RunStatus::Success);
    const std::string w1 = f.watermark();
    f.env.source().exec("alter table public.orders drop column amount");
    const RunSummary r = f.run();
    CHECK(r.status == RunStatus::Failed);
    CHECK(r.error_kind == ErrorKind::Permanent);
    CHECK(r.error.rfind("schema drift in public.orders: dropped column amount", 0) == 0);
    CHECK(r.schema_drift == true);
    CHECK(f.watermark() == w1);
    // Resolved by dropping it from the target too.
    f.env.target().exec("alter table raw.orders drop column amount");
    const RunSummary fixed = f.run();
    INFO(fixed.error);
    CHECK(fixed.status == RunStatus::Success);
    CHECK(fixed.schema_drift == false);
    CHECK(f.snapshot() == "order_id bigint, status text, updated_at timestamp with time zone");
  }
}

TEST_CASE("schema drift: a retyped column fails, naming both types, until the target has the new type") {
  DriftFixture f(pipeline("append_new_columns"));
  REQUIRE(f.run().status == RunStatus::Success);
  const std::string w1 = f.watermark();
  f.env.source().exec("alter table public.orders alter column amount type text");
  const RunSummary r = f.run();
  CHECK(r.status == RunStatus::Failed);
  CHECK(r.error ==
        "schema drift in public.orders: retyped amount numeric(12,2) -> text (on_schema_change: append_new_columns "
        "adds new columns only)");
  CHECK(f.watermark() == w1);
  CHECK(f.last_run_row() == "failed|" + r.error + "|retyped amount numeric(12,2) -> text");
  f.env.target().exec("alter table raw.orders alter column amount type text");
  CHECK(f.run().status == RunStatus::Success);
}

TEST_CASE("schema drift: a table with listed columns ignores a column added to the source, and others dropped") {
  DriftFixture f(pipeline("fail", "[order_id, status, updated_at]"));
  REQUIRE(f.run().status == RunStatus::Success);
  CHECK(f.snapshot() == "order_id bigint, status text, updated_at timestamp with time zone");
  f.env.source().exec(
      "alter table public.orders add column note text; alter table public.orders drop column amount;"
      " insert into public.orders values (2, 'new', clock_timestamp() - interval '1 minute', 'gift')");
  const RunSummary r = f.run();
  INFO(r.error);
  CHECK(r.status == RunStatus::Success);
  CHECK(r.schema_drift == false);
  CHECK(PgTestEnv::rows(f.env.target(), "select count(*) from raw.orders")[0] == "2");
  // But a listed column that goes is drift.
  f.env.source().exec("alter table public.orders drop column status");
  const RunSummary dropped = f.run();
  CHECK(dropped.status == RunStatus::Failed);
  CHECK(dropped.error == "schema drift in public.orders: dropped column status");
}

TEST_CASE("regression: the first run after the upgrade that stores column snapshots must not report drift") {
  // An existing deployment: loaded before state schema version 5, so no
  // snapshot; its target has types of its own and a column of its own.
  PgTestEnv env;
  env.source().exec(std::string("create table public.orders ") + kOrdersTable +
                    "; insert into public.orders values (1, 'new', 10.00, clock_timestamp() - interval '5 minutes')");
  env.target().exec(
      "create schema raw; create table raw.orders (order_id bigint primary key, status varchar(40), amount numeric,"
      " updated_at timestamptz not null, loaded_at timestamptz default now())");
  testing::TableRuns runs(env, env.config(pipeline("fail")));
  REQUIRE(runs.run("shop", "orders").summary.status == RunStatus::Success);
  env.state().exec("delete from tidemark.loaded_columns; update tidemark.runs set schema_drift = null");

  const RunSummary r = runs.run("shop", "orders").summary;
  INFO(r.error);
  CHECK(r.status == RunStatus::Success);
  CHECK(r.schema_drift == false);
  // The snapshot is stored with that run's load, from the source's types.
  CHECK(PgTestEnv::rows(env.state(), "select columns ->> 2 is not null, columns -> 1 ->> 'type' from"
                                     " tidemark.loaded_columns") == std::vector<std::string>{"t|text"});
}

TEST_CASE("schema drift: a backfill of an incremental table stops on drift, and appends like a run") {
  DriftFixture f(pipeline("fail"));
  REQUIRE(f.run().status == RunStatus::Success);
  const std::string w1 = f.watermark();
  f.env.source().exec("alter table public.orders add column note text; update public.orders set note = 'late'");
  BackfillOptions backfill;
  backfill.pipeline = "shop";
  backfill.table = "orders";
  backfill.from = "2000-01-01";
  backfill.to = "2100-01-01";
  CHECK(f.CommandRunner::run(run_backfill, backfill) == 1);
  CHECK((f.out.str() + f.err.str()).find("schema drift in public.orders: added column note text") != std::string::npos);
  CHECK(f.last_run_row() == "failed|schema drift in public.orders: added column note text|added column note text");

  f.use(pipeline("append_new_columns"));
  REQUIRE(f.CommandRunner::run(run_backfill, backfill) == 0);
  CHECK(PgTestEnv::rows(f.env.target(), "select note from raw.orders") == std::vector<std::string>{"late"});
  CHECK(f.watermark() == w1);  // a backfill never moves it
  CHECK(f.snapshot() ==
        "order_id bigint, status text, amount numeric(12,2), updated_at timestamp with time zone, note text");
}

}  // namespace tidemark
