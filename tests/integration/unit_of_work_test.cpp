// The PostgreSQL unit of work (daemon/pg/data/pg_unit_of_work) at its edges:
// a separate state database whose session dies between the step's record
// and the target's COMMIT, and the value a compare-and-set reports when
// another writer beat it.
#include <doctest/doctest.h>

#include <thread>

#include "core/run/cancel_token.h"
#include "core/run/partition_writer.h"
#include "core/time/instant_text.h"
#include "daemon/commands/chunk_logger.h"
#include "daemon/pg/data/pg_run_ports.h"
#include "daemon/pg/data/pg_target.h"
#include "daemon/pg/data/pipeline_connections.h"
#include "daemon/pg/state/pg_state_store.h"
#include "daemon/pg/state/state_schema.h"
#include "pg_test_env.h"

namespace tidemark {

using testing::PgTestEnv;

TEST_CASE("regression: with a separate state database, a lock lost after the record doubled a partition") {
  // Run A records its partition (lock held), then its state session dies
  // while the target commits. A backfill worker waiting on the partition's
  // lock gets it at once; its DELETE must not run beside A's uncommitted
  // INSERT, or the partition ends with both sets of rows, marked done.
  PgTestEnv env(/*state_in_target=*/false);
  env.target().exec("create schema mart; create table mart.daily (day date not null, n bigint not null)");
  const auto config = env.config(R"(pipeline: shop
source: source
target: target
schedule: "15 0 * * *"
timezone: UTC
tables:
  - name: daily
    mode: partition
    partition: { column: day }
    query: |
      select $1::date as day, g as n from generate_series(1, 3) g where $2::date > $1::date
    target_table: mart.daily
)");
  migrate_state_schema(env.state());
  const PipelineConfig& pipeline = *config->find_pipeline("shop");
  const TableConfig& table = *pipeline.find_table("daily");
  const TableKey key{"shop", "daily"};
  const TimeWindow day{*parse_instant("2026-03-01T00:00:00Z"), *parse_instant("2026-03-02T00:00:00Z")};
  CancelToken cancel;

  PipelineConnections a;
  a.open_state(*config);
  a.open_data(*config, pipeline);
  PgStateStore a_state(*a.state);
  PgSource a_source = a.make_source(nullptr, &cancel);
  PgTarget a_target(a.target(), a_source, &a_state, cancel);
  const RunLock lock{key, day};
  REQUIRE(a_state.lock(lock, false).value());
  const std::string a_pid = PgTestEnv::rows(*a.state, "select pg_backend_pid()")[0];
  const auto opened = a_state.open_run(RunStart{key, RunTrigger::Schedule, std::nullopt});
  REQUIRE(opened.ok());
  const PartitionRequest request{key, opened->run, day, "2026-03-01", "2026-03-02",
                                 "2026-03-01 00:00:00", "2026-03-02 00:00:00", false};
  auto work = a_target.begin(lock);
  REQUIRE(work->replace_partition(table, request).ok());
  StepRecord record;
  record.lock = lock;
  record.run = opened->run;
  record.partition_done = true;
  const auto recorded = work->record(record);
  REQUIRE(recorded.ok());
  REQUIRE(recorded->written);

  PgConnection admin(testing::test_dsn("postgres"), "admin");
  admin.exec("select pg_terminate_backend(" + a_pid + ")");

  RunSummary b_summary;
  std::thread b([&] {
    PipelineConnections bc;
    bc.open_state(*config);
    bc.open_data(*config, pipeline);
    PgStateStore b_state(*bc.state);
    PgSource b_source = bc.make_source(nullptr, &cancel);
    PgTarget b_target(bc.target(), b_source, &b_state, cancel);
    ChunkLogger observer;
    b_summary = PartitionWriter(RunContext{pipeline, table, b_state, b_source, b_target, observer, cancel, sole_owner()})
                    .write(day, RunTrigger::Backfill, /*wait=*/true);
  });
  // B waits, on the target, for A's transaction to end.
  const std::string target_db = PgTestEnv::rows(env.target(), "select current_database()")[0];
  bool waiting = false;
  for (int i = 0; i < 500 && !waiting; ++i) {
    waiting = PgTestEnv::rows(admin, "select count(*) from pg_stat_activity where datname = '" + target_db +
                                         "' and wait_event_type = 'Lock' and wait_event = 'advisory'")[0] == "1";
    if (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(waiting);

  const Status committed = work->commit();  // the target commits; the state's commit finds its session gone
  CHECK_FALSE(committed.ok());
  b.join();
  CHECK(b_summary.status == RunStatus::Success);
  CHECK(PgTestEnv::rows(env.target(), "select count(*) from mart.daily")[0] == "3");
}

TEST_CASE("regression: a compare-and-set beaten while it waited named the value it had expected as the one found") {
  PgTestEnv env;
  migrate_state_schema(env.state());
  const TableKey key{"shop", "orders"};
  PgStateStore store(env.state());
  REQUIRE(store.lock(RunLock{key, std::nullopt}, false).value());
  const auto opened = store.open_run(RunStart{key, RunTrigger::Manual, std::nullopt});
  REQUIRE(opened.ok());
  env.state().exec(
      "insert into tidemark.watermarks (pipeline, table_name, value, value_type, moved_at, updated_at)"
      " values ('shop', 'orders', '5', 'integer', now(), now())");

  // Another writer updates the row and holds it; our record waits on it.
  const std::string state_db = PgTestEnv::rows(env.state(), "select current_database()")[0];
  PgConnection other(testing::test_dsn(state_db), "other writer");
  other.exec("begin");
  other.exec("update tidemark.watermarks set value = '99'");
  Result<StepRecorded> recorded = Error{"not run"};
  std::thread ours([&] {
    StepRecord step;
    step.lock = RunLock{key, std::nullopt};
    step.run = opened->run;
    step.move = WatermarkMove{CursorValue{CursorType::Integer, 5}, CursorValue{CursorType::Integer, 10}};
    recorded = store.record_step(env.state(), step);
  });
  PgConnection admin(testing::test_dsn("postgres"), "admin");
  for (int i = 0; i < 500; ++i) {
    if (PgTestEnv::rows(admin, "select count(*) from pg_stat_activity where datname = '" + state_db +
                                   "' and wait_event_type = 'Lock'")[0] == "1") {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  other.exec("commit");
  ours.join();
  REQUIRE(recorded.ok());
  CHECK(recorded->lock_held);
  CHECK_FALSE(recorded->written);
  REQUIRE(recorded->found);
  CHECK(cursor_to_text(*recorded->found) == "99");
  store.unlock(RunLock{key, std::nullopt});
}

namespace {

// The ports of pipeline p's table `table_name` over an env's databases, as
// a run has them, for the checks of the COPY format.
struct CopyFormatPorts {
  CopyFormatPorts(PgTestEnv& env, const std::string& yaml, const std::string& table_name)
      : config(env.config(yaml)),
        pipeline(*config->find_pipeline("p")),
        table(*pipeline.find_table(table_name)),
        connections(open(*config, pipeline)),
        ports(*connections, cancel) {}
  static std::unique_ptr<PipelineConnections> open(const Config& config, const PipelineConfig& pipeline) {
    auto connections = std::make_unique<PipelineConnections>();
    connections->open_state(config);
    connections->open_data(config, pipeline);
    return connections;
  }
  std::shared_ptr<const Config> config;
  const PipelineConfig& pipeline;
  const TableConfig& table;
  CancelToken cancel;
  std::unique_ptr<PipelineConnections> connections;
  PgRunPorts ports;
};

}  // namespace

TEST_CASE("the target's check chooses binary COPY only for the same built-in types on both sides") {
  struct Row {
    const char* source_ddl;
    const char* target_ddl;
    const char* columns;  // the pipeline's `columns`, or empty for all
    CopyFormat expected;
  };
  const Row rows[] = {
      {"(id bigint primary key, amount numeric(12,2), at timestamptz not null)",
       "(id bigint primary key, amount numeric(12,2), at timestamptz not null)", "", CopyFormat::Binary},
      // Another typmod, another width: text converts, binary would not.
      {"(id bigint primary key, amount numeric(12,2), at timestamptz not null)",
       "(id bigint primary key, amount numeric(14,2), at timestamptz not null)", "", CopyFormat::Text},
      {"(id int primary key, at timestamptz not null)", "(id bigint primary key, at timestamptz not null)", "",
       CopyFormat::Text},
      // A domain is a type of the database's own.
      {"(id bigint primary key, amount cents, at timestamptz not null)",
       "(id bigint primary key, amount cents, at timestamptz not null)", "", CopyFormat::Text},
      // Only the copied columns count: the domain column is not one of them.
      {"(id bigint primary key, amount cents, at timestamptz not null)",
       "(id bigint primary key, at timestamptz not null, extra text)", "[id, at]", CopyFormat::Binary},
  };
  for (const Row& row : rows) {
    PgTestEnv env;
    const std::string domain = "create domain cents as bigint; ";
    env.source().exec(domain + "create table public.t " + row.source_ddl);
    env.target().exec(domain + "create table public.t " + row.target_ddl);
    std::string yaml = "pipeline: p\nsource: source\ntarget: target\nschedule: \"@hourly\"\ntables:\n"
                       "  - { name: t, source_table: t, target_table: t, key: [id], cursor: at";
    if (*row.columns) yaml += std::string(", columns: ") + row.columns;
    yaml += " }\n";
    CopyFormatPorts f(env, yaml, "t");
    const auto inspected = f.ports.source.inspect(f.table);
    REQUIRE(inspected.ok());
    const auto checked = f.ports.target.check(f.table);
    INFO(row.source_ddl, " -> ", row.target_ddl);
    REQUIRE(checked.ok());
    CHECK(f.ports.target.copy_format(*inspected) == row.expected);
  }
}

TEST_CASE("regression: the chunks after the one that made a create_target table copied as text") {
  // The unit that makes the table reads its types; once it commits, the
  // run's later units (its next chunks) copy in binary too. A unit rolled
  // back leaves nothing: its table is gone with it.
  PgTestEnv env;
  env.source().exec(
      "create table public.orders (id bigint primary key, amount numeric(12,2), at timestamptz not null); "
      "insert into public.orders values (1, 1.50, now() - interval '1 hour')");
  CopyFormatPorts f(env,
                    "pipeline: p\nsource: source\ntarget: target\nschedule: \"@hourly\"\ncreate_target: true\n"
                    "tables:\n  - { name: orders, source_table: public.orders, target_table: wh.orders, key: [id], "
                    "cursor: at }\n",
                    "orders");
  PgRunPorts& ports = f.ports;
  const TableConfig& table = f.table;
  const auto inspected = ports.source.inspect(table);
  REQUIRE(inspected.ok());
  const auto checked = ports.target.check(table);
  REQUIRE(checked.ok());
  REQUIRE_FALSE(checked->exists);
  CHECK(ports.target.copy_format(*inspected) == CopyFormat::Text);  // no target types to go by yet
  const RunLock lock{TableKey{"p", "orders"}, std::nullopt};
  {
    const auto rolled_back = ports.target.begin(lock);
    REQUIRE(rolled_back->create_table(table, *inspected).ok());
  }
  CHECK(ports.target.copy_format(*inspected) == CopyFormat::Text);
  {
    const auto unit = ports.target.begin(lock);
    REQUIRE(unit->create_table(table, *inspected).ok());
    CHECK(ports.target.copy_format(*inspected) == CopyFormat::Text);  // not committed yet
    REQUIRE(unit->commit().ok());
  }
  CHECK(ports.target.copy_format(*inspected) == CopyFormat::Binary);
}

}  // namespace tidemark
