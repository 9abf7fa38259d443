// The watch on changes an insert-only cursor cannot see, against a real
// PostgreSQL: each run reads the source's statistics of the table (its
// partitions' for a partitioned one), records what grew since the
// previous run in its run row, and status names it until a reconcile
// copies the changed rows again. A stamped cursor and a table with a
// scheduled reconcile are not watched.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "daemon/commands/commands.h"
#include "pg_test_env.h"

namespace tidemark {
namespace {

using testing::PgTestEnv;

const char* const kUnseenChangesPipeline = R"(pipeline: shop
source: source
target: target
schedule: "*/5 * * * *"
tables:
  - name: items
    source_table: public.items
    target_table: raw.items
    key: [id]
    cursor: id
  - name: parts
    source_table: public.parts
    target_table: raw.parts
    key: [id, day]
    cursor: id
  - name: stamped
    source_table: public.items
    target_table: raw.items_stamped
    key: [id]
    cursor: changed_at
  - name: reconciled
    source_table: public.items
    target_table: raw.items_reconciled
    key: [id]
    cursor: id
    deletes: { reconcile: "0 3 * * *" }
)";

struct Watch : testing::CommandRunner {
  PgTestEnv env;

  Watch() {
    env.source().exec(
        "create table public.items (id bigint generated always as identity primary key, price numeric,"
        " changed_at timestamptz not null default now());"
        "insert into public.items (price) select g from generate_series(1, 100) g;"
        "create table public.parts (id bigserial, day date not null, v int, primary key (id, day))"
        " partition by range (day);"
        "create table public.parts_2026 partition of public.parts for values from ('2026-01-01') to ('2027-01-01');"
        "create table public.parts_2027 partition of public.parts for values from ('2027-01-01') to ('2028-01-01');"
        "insert into public.parts (day, v) select date '2026-06-01' + g * 2, g from generate_series(1, 200) g");
    env.target().exec("create schema raw;"
                      "create table raw.items (id bigint primary key, price numeric, changed_at timestamptz);"
                      "create table raw.items_stamped (like raw.items including all);"
                      "create table raw.items_reconciled (like raw.items including all);"
                      "create table raw.parts (id bigint, day date, v int, primary key (id, day))");
    config_path = env.write_config_files(kUnseenChangesPipeline);
    REQUIRE(load() == 0);
  }

  int load() {
    RunOptions run;
    run.pipeline = "shop";
    return CommandRunner::run(run_run, run);
  }

  // Makes the changes this session made visible in the statistics.
  void flush_statistics() { env.source().exec("select pg_stat_force_next_flush()"); env.source().exec("select 1"); }

  std::vector<std::string> unseen() {
    return PgTestEnv::rows(env.state(),
                           "select table_name || ' ' || coalesce(unseen_changes::text, '-') from tidemark.runs r"
                           " where run_id = (select max(run_id) from tidemark.runs x where x.table_name ="
                           " r.table_name and x.trigger <> 'reconcile') order by 1");
  }

  nlohmann::json status() {
    StatusOptions options;
    options.json = true;
    out.str("");
    REQUIRE(CommandRunner::run(run_status, options) == 0);
    return nlohmann::json::parse(out.str());
  }
};

}  // namespace

TEST_CASE("updates and deletes an identity cursor cannot see are counted per run until a reconcile repairs them") {
  Watch w;
  CHECK(w.unseen() == std::vector<std::string>{"items 0", "parts 0", "reconciled -", "stamped -"});
  // The application updates 5 rows and deletes 2: no load can see them.
  w.env.source().exec("update public.items set price = price * 2 where id <= 5;"
                      "delete from public.items where id in (60, 61);"
                      "update public.parts set v = -v where id in (1, 150);"  // one row in each partition
                      "delete from public.parts where id = 2");
  w.flush_statistics();
  REQUIRE(w.load() == 0);
  CHECK(w.unseen() == std::vector<std::string>{"items 7", "parts 3", "reconciled -", "stamped -"});
  // The next run adds what grew since.
  w.env.source().exec("update public.items set price = 0 where id = 50");
  w.flush_statistics();
  REQUIRE(w.load() == 0);
  CHECK(w.unseen() == std::vector<std::string>{"items 8", "parts 3", "reconciled -", "stamped -"});
  const nlohmann::json tables = w.status();
  REQUIRE(tables.size() == 4);
  CHECK(tables[0]["table"] == "items");
  CHECK(tables[0]["unseen_changes"] == 8);
  CHECK(tables[0]["why"]["reason"] == "unseen_changes");
  CHECK(tables[0]["why"]["unseen_changes"] == 8);
  CHECK(tables[0]["why"]["text"].get<std::string>().find("counted 8 updates and deletes") != std::string::npos);
  CHECK(tables[2]["table"] == "stamped");
  CHECK(tables[2]["unseen_changes"].is_null());
  CHECK(tables[2]["why"].is_null());

  // A reconcile copies the changed rows again and deletes the gone ones:
  // the table ran clean, and the count starts again from there.
  ReconcileOptions reconcile;
  reconcile.pipeline = "shop";
  reconcile.table = "items";
  w.out.str("");
  REQUIRE(w.CommandRunner::run(run_reconcile, reconcile) == 0);
  INFO(w.out.str());
  CHECK(w.out.str().find("2 rows deleted, 0 missing, 6 changed (copied again)") != std::string::npos);
  CHECK(w.status()[0]["why"].is_null());
  CHECK(w.status()[0]["unseen_changes"] == 0);
  REQUIRE(w.load() == 0);
  CHECK(w.unseen() == std::vector<std::string>{"items 0", "parts 3", "reconciled -", "stamped -"});
}

}  // namespace tidemark
