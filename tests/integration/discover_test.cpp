// tidemark discover against a real catalog: the choices it makes from
// triggers (plpgsql and contrib's moddatetime), identities, keys and
// partitions, and for tables without a key (append by an identity, a
// sequence or a clock default; a snapshot without key; left out above
// --snapshot-limit); the files it writes, never over one that exists
// without --force; and that what it writes validates and runs as written.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/watermark/safe_horizon.h"
#include "daemon/commands/commands.h"
#include "daemon/commands/validate_command.h"
#include "pg_test_env.h"

namespace tidemark {
namespace {

using testing::PgTestEnv;

// One schema of each kind of table discover tells apart, and a schema
// whose names need quoting.
const char* const kDiscoverSource = R"SQL(
create extension if not exists moddatetime;
create schema app;
create table app.orders (id bigserial primary key, note text,
                         updated_at timestamptz not null default now());
create trigger orders_stamp before update on app.orders
  for each row execute function moddatetime(updated_at);
create table app.items (id int generated always as identity primary key, name text not null);
create table app.settings (key text primary key, value text);
create table app.log (line text);
create table app.clicks (id bigint generated always as identity, page text);
create table app.audit (at timestamptz not null default now(), what text);
create table app.touched (created_at timestamptz not null default now(), note text);
create function app.touch() returns trigger language plpgsql as $$
begin
  new.created_at := now();
  return new;
end $$;
create trigger touch before update on app.touched for each row execute function app.touch();
create table app.hits (id bigserial, at timestamptz not null, page text) partition by range (at);
create table app.hits_2026 partition of app.hits for values from ('2026-01-01') to ('2027-01-01');
create table app.events (id bigint not null, at timestamptz not null, kind text, primary key (id, at))
  partition by range (at);
create table app.events_2026 partition of app.events for values from ('2026-01-01') to ('2027-01-01');
create schema "Odd";
create table "Odd"."Mixed Case" ("Row Id" int primary key, "Changed At" timestamptz not null default now());
create function "Odd".stamp() returns trigger language plpgsql as $$
begin
  if new."Changed At" = old."Changed At" then
    new."Changed At" := clock_timestamp();
  end if;
  return new;
end $$;
create trigger stamp before update on "Odd"."Mixed Case" for each row execute function "Odd".stamp();
insert into app.orders (note) values ('a'), ('b');
insert into app.items (name) values ('x');
insert into app.settings values ('mode', 'on');
insert into app.events values (1, '2026-06-01', 'click');
insert into app.log values ('same'), ('same'), ('other');
insert into app.clicks (page) values ('/'), ('/about');
insert into app.audit (what) values ('login');
insert into app.touched (note) values ('first');
insert into app.hits (at, page) values ('2026-06-01', '/'), ('2026-06-02', '/');
insert into "Odd"."Mixed Case" values (1);
)SQL";

struct Discover : testing::CommandRunner {
  PgTestEnv env;
  std::string dir;

  explicit Discover(bool state_in_target = true) : env(state_in_target) {
    env.source().exec(kDiscoverSource);
    // The configuration's own pipeline file must parse; it loads nothing discover looks at.
    config_path = env.write_config_files(
        "pipeline: other\nsource: source\ntarget: target\nschedule: \"@daily\"\ntables:\n"
        "  - name: t\n    source_table: public.t\n    target_table: public.t\n    key: [id]\n    cursor: c\n");
    dir = std::filesystem::path(config_path).parent_path().string() + "/discovered";
    std::filesystem::create_directories(dir);
  }

  int discover(std::vector<std::string> schemas = {}, bool write = true, bool force = false,
               const std::string& target_schema = "") {
    DiscoverOptions options;
    options.target_schema = target_schema;
    options.source = "source";
    options.target = "target";
    options.schemas = std::move(schemas);
    if (write) options.write_dir = dir;
    options.force = force;
    out.str("");
    err.str("");
    return run(run_discover, options);
  }
  std::string file(const std::string& name) {
    std::ifstream in(dir + "/" + name);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
};

}  // namespace

TEST_CASE("discover: each table's key and cursor from the catalog, written one file per schema") {
  Discover d;
  REQUIRE(d.discover() == 0);
  CHECK(d.out.str().find("12 tables found") == std::string::npos);  // partitions are not tables of their own
  CHECK(d.out.str().find("10 tables found in 2 schemas: 2 incremental (0 of them insert-only), 3 append, 5 snapshot, "
                         "0 left out") != std::string::npos);
  const std::string app = d.file("source_app.yaml");
  const std::string odd = d.file("source_Odd.yaml");
  CHECK(app.find("pipeline: source_app\n") != std::string::npos);
  const std::size_t orders = app.find("  - name: orders\n");
  REQUIRE(orders != std::string::npos);
  CHECK(app.rfind("  # cursor: updated_at is stamped on every UPDATE by trigger orders_stamp, on INSERT by its",
                  orders) != std::string::npos);
  // An identity sees new rows only: the exact default is a snapshot.
  CHECK(app.find("  - name: items\n    mode: snapshot\n    source_table: app.items\n") != std::string::npos);
  CHECK(app.find("# Note: id comes from an identity: as a cursor it sees new rows only") != std::string::npos);
  CHECK(app.find("  - name: settings\n    mode: snapshot\n") != std::string::npos);
  CHECK(app.find("  - name: events\n    mode: snapshot\n    source_table: app.events\n") != std::string::npos);
  CHECK(app.find("events_2026") == std::string::npos);
  // Without a key: appended by an insert-only cursor, else a snapshot without key.
  CHECK(app.find("  - name: clicks\n    mode: append\n    source_table: app.clicks\n    target_table: app.clicks\n"
                 "    cursor: id\n") != std::string::npos);
  CHECK(app.find("  - name: audit\n    mode: append\n    source_table: app.audit\n    target_table: app.audit\n"
                 "    cursor: at\n") != std::string::npos);
  CHECK(app.find("  - name: hits\n    mode: append\n    source_table: app.hits\n    target_table: app.hits\n"
                 "    cursor: id\n") != std::string::npos);
  CHECK(app.find("# mode: append: id comes from a sequence (nextval('app.hits_id_seq'::regclass))") !=
        std::string::npos);
  CHECK(app.find("  - name: log\n    mode: snapshot\n    source_table: app.log\n    target_table: app.log\n\n") !=
        std::string::npos);
  // The trigger makes created_at an updated_at: not insert-only.
  CHECK(app.find("  - name: touched\n    mode: snapshot\n    source_table: app.touched\n"
                 "    target_table: app.touched\n") != std::string::npos);
  CHECK(app.find("# Note: created_at is stamped on every UPDATE by trigger touch") != std::string::npos);
  CHECK(app.find("hits_2026") == std::string::npos);
  CHECK(app.find("# Left out:") == std::string::npos);
  CHECK(odd.find("    source_table: '\"Odd\".\"Mixed Case\"'\n") != std::string::npos);
  CHECK(odd.find("    key: ['\"Row Id\"']\n    cursor: '\"Changed At\"'\n") != std::string::npos);
}

TEST_CASE("discover: above --snapshot-limit's estimated rows, an identity with a daily reconcile") {
  Discover d;
  d.env.source().exec("analyze app.items; analyze app.log; analyze app.clicks");  // estimates of 1 row and more
  DiscoverOptions options;
  options.source = "source";
  options.target = "target";
  options.schemas = {"app"};
  options.snapshot_limit = 0;
  REQUIRE(d.run(run_discover, options) == 0);
  const std::string app = d.out.str();
  CHECK(app.find("  - name: items\n    source_table: app.items\n    target_table: app.items\n    key: [id]\n"
                 "    cursor: id\n    deletes: { reconcile: \"0 3 * * *\" }\n") != std::string::npos);
  CHECK(app.find("about 1 rows, above --snapshot-limit (0)") != std::string::npos);
  CHECK(app.find("INSERT ONLY") != std::string::npos);
  // Never analyzed: no estimate, a snapshot.
  CHECK(app.find("  - name: settings\n    mode: snapshot\n") != std::string::npos);
  // Without a key: too large for a snapshot without key, and nothing to
  // append by; an insert-only cursor appends whatever the size.
  CHECK(app.find("#   app.log: no primary key and no unique index on NOT NULL columns, so nothing tells its rows\n"
                 "#     apart; about 3 rows, above --snapshot-limit (0)") != std::string::npos);
  CHECK(app.find("  - name: clicks\n    mode: append\n") != std::string::npos);
}

TEST_CASE("discover: --schema limits it; an existing file is kept unless --force") {
  Discover d;
  REQUIRE(d.discover({"app"}) == 0);
  CHECK(std::filesystem::exists(d.dir + "/source_app.yaml"));
  CHECK_FALSE(std::filesystem::exists(d.dir + "/source_Odd.yaml"));
  std::ofstream(d.dir + "/source_app.yaml") << "# mine\n";
  CHECK(d.discover({"app"}) == 2);
  CHECK(d.err.str().find("source_app.yaml exists; nothing was written (add --force to replace it)") !=
        std::string::npos);
  CHECK(d.file("source_app.yaml") == "# mine\n");
  CHECK(d.discover({"app"}, true, true) == 0);
  CHECK(d.file("source_app.yaml").find("pipeline: source_app") != std::string::npos);
}

TEST_CASE("discover: without --write the files go to standard output, the count to standard error") {
  Discover d;
  REQUIRE(d.discover({"Odd"}, false) == 0);
  CHECK(d.out.str().find("pipeline: source_Odd\n") == d.out.str().find("pipeline:"));
  CHECK(d.err.str() == "1 tables found in 1 schema: 1 incremental (0 of them insert-only), 0 snapshot, 0 left out\n");
  REQUIRE(d.discover({"app"}, false) == 0);
  CHECK(d.err.str() ==
        "9 tables found in 1 schema: 1 incremental (0 of them insert-only), 3 append, 5 snapshot, 0 left out\n");
  CHECK(std::filesystem::is_empty(d.dir));
}

TEST_CASE("discover: what it writes validates and runs as written") {
  Discover d;
  d.env.target().exec(R"SQL(
create schema app;
create table app.orders (id bigint primary key, note text, updated_at timestamptz not null);
create table app.items (id int primary key, name text not null);
create table app.settings (key text primary key, value text);
create table app.events (id bigint not null, at timestamptz not null, kind text, primary key (id, at));
create schema "Odd";
create table "Odd"."Mixed Case" ("Row Id" int primary key, "Changed At" timestamptz not null);
)SQL");
  REQUIRE(d.discover() == 0);
  // Rows stamped a moment ago are the next run's (the safe horizon's margin).
  std::this_thread::sleep_for(std::chrono::microseconds(kStartReportMargin) + std::chrono::milliseconds(50));
  const std::string pipelines = std::filesystem::path(d.config_path).parent_path().string() + "/pipelines";
  std::filesystem::remove(pipelines + "/pipeline.yaml");
  for (const char* name : {"source_app.yaml", "source_Odd.yaml"}) {
    std::filesystem::copy_file(d.dir + "/" + name, pipelines + "/" + name);
  }
  ValidateOptions validate;
  validate.config_path = d.config_path;
  std::ostringstream out;
  std::ostringstream err;
  CHECK_MESSAGE(run_validate(validate, Instant{}, out, err) == 0, err.str());
  for (const char* pipeline : {"source_app", "source_Odd"}) {
    RunOptions run;
    run.pipeline = pipeline;
    CHECK_MESSAGE(d.run(run_run, run) == 0, d.err.str());
  }
  using Rows = std::vector<std::string>;
  CHECK(PgTestEnv::rows(d.env.target(), "select count(*) from app.orders") == Rows{"2"});
  CHECK(PgTestEnv::rows(d.env.target(), "select name from app.items") == Rows{"x"});
  CHECK(PgTestEnv::rows(d.env.target(), "select value from app.settings") == Rows{"on"});
  CHECK(PgTestEnv::rows(d.env.target(), "select kind from app.events") == Rows{"click"});
  CHECK(PgTestEnv::rows(d.env.target(), R"(select "Row Id" from "Odd"."Mixed Case")") == Rows{"1"});
  // The tables without a key, their targets made by their first runs.
  const auto same = [&](const std::string& table, const std::string& columns) {
    const std::string query = "select " + columns + " from " + table + " order by " + columns;
    const Rows source = PgTestEnv::rows(d.env.source(), query);
    const Rows target = PgTestEnv::rows(d.env.target(), query);
    CHECK_MESSAGE(source == target, table);
    return source.size();
  };
  CHECK(same("app.clicks", "id, page") == 2);
  CHECK(same("app.audit", "at, what") == 1);
  CHECK(same("app.hits", "id, at, page") == 2);
  CHECK(same("app.log", "line") == 3);
  CHECK(same("app.touched", "created_at, note") == 1);
  CHECK(PgTestEnv::rows(d.env.target(), "select count(*) from pg_index where indrelid = 'app.clicks'::regclass") ==
        Rows{"0"});

  // New rows are appended; a snapshot without key follows the source as
  // a multiset, a row repeated included.
  d.env.source().exec(R"SQL(
insert into app.clicks (page) values ('/new');
insert into app.audit (what) values ('logout');
insert into app.hits (at, page) values ('2026-06-03', '/new');
insert into app.log values ('same');
delete from app.log where line = 'other';
update app.touched set note = 'changed';
)SQL");
  std::this_thread::sleep_for(std::chrono::microseconds(kStartReportMargin) + std::chrono::milliseconds(50));
  RunOptions again;
  again.pipeline = "source_app";
  CHECK_MESSAGE(d.run(run_run, again) == 0, d.err.str());
  CHECK(same("app.clicks", "id, page") == 3);
  CHECK(same("app.audit", "at, what") == 2);
  CHECK(same("app.hits", "id, at, page") == 3);
  CHECK(same("app.log", "line") == 3);
  CHECK(same("app.touched", "created_at, note") == 1);
}

TEST_CASE("discover: with the state in a database of its own, tables without a key are snapshots and validate") {
  // mode: append needs the state in the target's database, which the
  // configuration checks: discover writes what it would accept.
  Discover d(/*state_in_target=*/false);
  REQUIRE(d.discover({"app"}) == 0);
  CHECK(d.out.str().find("9 tables found in 1 schema: 1 incremental (0 of them insert-only), 8 snapshot, 0 left "
                         "out") != std::string::npos);
  const std::string app = d.file("source_app.yaml");
  CHECK(app.find("mode: append\n") == std::string::npos);
  CHECK(app.find("  - name: clicks\n    mode: snapshot\n") != std::string::npos);
  CHECK_MESSAGE(app.find("#   connection target and the state lives in state; so each run makes the target equal") !=
                    std::string::npos,
                app);
  const std::string pipelines = std::filesystem::path(d.config_path).parent_path().string() + "/pipelines";
  std::filesystem::remove(pipelines + "/pipeline.yaml");
  std::filesystem::copy_file(d.dir + "/source_app.yaml", pipelines + "/source_app.yaml");
  ValidateOptions validate;
  validate.config_path = d.config_path;
  std::ostringstream out;
  std::ostringstream err;
  CHECK_MESSAGE(run_validate(validate, Instant{}, out, err) == 0, err.str());
}

TEST_CASE("discover: two tables that one --target-schema would load into one table are refused, nothing written") {
  Discover d;
  d.env.source().exec("create table \"Odd\".orders (id int primary key)");
  CHECK(d.discover({}, true, false, "raw") == 2);
  // Schemas come in catalog order ("Odd" sorts before app).
  CHECK(d.err.str() == "tidemark discover: \"Odd\".orders and app.orders would both load into raw.orders; run discover "
                       "once per schema, each with a --target-schema of its own\n");
  CHECK(std::filesystem::is_empty(d.dir));
}

TEST_CASE("regression: moddatetime on a column with a non-ASCII name is seen as its stamp") {
  // The trigger's arguments were read in escape form, which writes such
  // bytes as octal: the column never matched, and the table fell back to
  // a snapshot.
  Discover d;
  d.env.source().exec("create schema de; create table de.bestellung (id int primary key, "
                      "\"geändert\" timestamptz not null default now());"
                      "create trigger stempel before update on de.bestellung "
                      "for each row execute function moddatetime(\"geändert\")");
  REQUIRE(d.discover({"de"}, false) == 0);
  CHECK(d.out.str().find("    cursor: '\"geändert\"'\n") != std::string::npos);
}

}  // namespace tidemark
