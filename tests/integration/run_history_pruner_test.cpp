// The run history's pruning against PostgreSQL: old runs go, in batches;
// what status, the alerts and the catch-up rule read stays, and reads the
// same before and after.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "daemon/pg/state/run_history_pruner.h"
#include "daemon/pg/state/state_reader.h"
#include "daemon/pg/state/state_schema.h"
#include "pg_test_env.h"

namespace tidemark {
namespace {

using testing::PgTestEnv;

// Inserts `count` runs of one table, `days_ago` days back, one second apart.
void add_runs(PgConnection& state, const std::string& table, const std::string& trigger, const std::string& status,
              int count, int days_ago) {
  state.exec(
      "insert into tidemark.runs (pipeline, table_name, trigger, kind, status, error, started_at, finished_at) "
      "select 'p', $1, $2, case when $2 = 'reconcile' then 'reconcile' else 'load' end, $3, "
      "case when $3 = 'failed' then 'boom ' || g end, "
      "now() - make_interval(days => $5::int) + g * interval '1 second', "
      "case when $3 <> 'running' then now() - make_interval(days => $5::int) + g * interval '1 second' end "
      "from generate_series(1, $4::int) g",
      {table, trigger, status, std::to_string(count), std::to_string(days_ago)});
}

// The table's runs, oldest first: "trigger status old" each, old when
// older than 30 days.
std::string runs_of(PgConnection& state, const std::string& table) {
  return PgTestEnv::rows(state,
                         "select string_agg(trigger || ' ' || status || case when now() - started_at > "
                         "interval '30 days' then ' old' else '' end, ', ' order by run_id) from tidemark.runs "
                         "where table_name = '" + table + "'")[0];
}

// What status and the alerts read of each table, and what the catch-up
// rule reads, as text to compare.
std::vector<std::string> what_is_read(PgConnection& state, const std::vector<TableKey>& tables) {
  StateReader reader(state);
  const auto states = reader.table_states(tables);
  REQUIRE(states.ok());
  std::vector<std::string> out;
  const auto opt = [](const auto& v) { return v ? std::to_string(*v) : std::string("-"); };
  for (const TableState& s : states->tables) {
    out.push_back(s.table.table + ": last run " + (s.last_run ? std::to_string(s.last_run->run_id) : "-") +
                  ", last success " + opt(s.last_success_at) + ", failed " + std::to_string(s.last_finished_failed) +
                  " " + s.last_finished_error.value_or("-") + ", failures " + std::to_string(s.failures_since_success) +
                  " since " + opt(s.failing_since) + ", reconcile " +
                  (s.last_reconcile ? std::to_string(s.last_reconcile->finished_at) : "-") + " failed " +
                  std::to_string(s.last_reconcile_failed) + " " + s.last_reconcile_error.value_or("-"));
  }
  const auto starts = reader.last_run_starts(tables);
  REQUIRE(starts.ok());
  for (const auto& [job, at] : *starts) {
    out.push_back(job.table.table + " " + std::to_string(static_cast<int>(job.kind)) + " started " +
                  std::to_string(at.time_since_epoch().count()));
  }
  return out;
}

}  // namespace

TEST_CASE("the run history is pruned to its retention, keeping what status, the alerts and catch-up read") {
  PgTestEnv env;
  PgConnection& state = env.state();
  migrate_state_schema(state);
  // In the order they ran, as run ids follow start times:
  // healthy: old successes, then recent ones: every old one goes.
  // failing: old successes, then a streak of failures that is still on.
  // reconciled: old reconciles (successes, then a failure), loads since.
  // manual: an old manual run that failed, successes of the schedule since.
  // named: old runs that a watermark and a partition name as their
  // writers, and one still running.
  add_runs(state, "healthy", "schedule", "success", 40, 40);
  add_runs(state, "failing", "schedule", "success", 4, 40);
  add_runs(state, "reconciled", "reconcile", "success", 3, 40);
  add_runs(state, "manual", "manual", "failed", 1, 40);
  add_runs(state, "named", "schedule", "success", 5, 40);
  add_runs(state, "reconciled", "reconcile", "failed", 1, 39);
  add_runs(state, "named", "schedule", "running", 1, 39);
  add_runs(state, "reconciled", "schedule", "success", 3, 38);
  add_runs(state, "failing", "schedule", "failed", 5, 35);
  add_runs(state, "manual", "schedule", "success", 2, 2);
  add_runs(state, "healthy", "schedule", "success", 3, 1);
  add_runs(state, "reconciled", "schedule", "success", 1, 1);
  add_runs(state, "named", "schedule", "success", 1, 1);
  state.exec("insert into tidemark.watermarks (pipeline, table_name, value, value_type, moved_at, updated_at, "
             "last_run_id) select 'p', 'named', '1', 'integer', now(), now(), min(run_id) from tidemark.runs "
             "where table_name = 'named'");
  state.exec("insert into tidemark.partitions (pipeline, table_name, partition_lo, partition_hi, status, run_id, "
             "updated_at) select 'p', 'named', now() - interval '2 days', now() - interval '1 day', 'done', "
             "min(run_id) + 1, now() from tidemark.runs where table_name = 'named'");
  const std::vector<TableKey> tables = {{"p", "healthy"}, {"p", "failing"}, {"p", "reconciled"}, {"p", "manual"},
                                        {"p", "named"}};
  const auto before = what_is_read(state, tables);
  const auto resets_before = PgTestEnv::rows(state, "select count(*) from tidemark.watermark_resets");

  // Batches of 7 rows: the pass goes on across them to the retention.
  const auto pruned = RunHistoryPruner(state, 7).prune(std::chrono::hours(24 * 30));
  REQUIRE_MESSAGE(pruned.ok(), pruned.error());
  CHECK_FALSE(pruned->busy);
  CHECK(pruned->complete);
  CHECK(pruned->batches > 3);

  CHECK(runs_of(state, "healthy") == "schedule success, schedule success, schedule success");
  CHECK(runs_of(state, "failing") == "schedule success old, schedule failed old, schedule failed old, "
                                     "schedule failed old, schedule failed old, schedule failed old");
  CHECK(runs_of(state, "reconciled") ==
        "reconcile success old, reconcile failed old, schedule success");
  CHECK(runs_of(state, "manual") == "manual failed old, schedule success, schedule success");
  CHECK(runs_of(state, "named") ==
        "schedule success old, schedule success old, schedule running old, schedule success");
  CHECK(pruned->deleted == 40 + 3 + 2 + 3 + 3);
  CHECK(what_is_read(state, tables) == before);
  CHECK(PgTestEnv::rows(state, "select count(*) from tidemark.watermark_resets") == resets_before);

  // Nothing left to prune: a second pass removes nothing.
  const auto again = RunHistoryPruner(state, 7).prune(std::chrono::hours(24 * 30));
  REQUIRE(again.ok());
  CHECK(again->deleted == 0);
}

TEST_CASE("a pass stopped between batches leaves the rest to the next pass") {
  PgTestEnv env;
  PgConnection& state = env.state();
  migrate_state_schema(state);
  add_runs(state, "healthy", "schedule", "success", 20, 40);
  add_runs(state, "healthy", "schedule", "success", 1, 1);
  int asked = 0;
  const auto stopped = RunHistoryPruner(state, 7).prune(std::chrono::hours(24 * 30), [&] { return ++asked == 1; });
  REQUIRE(stopped.ok());
  CHECK_FALSE(stopped->complete);
  CHECK(stopped->batches == 1);
  CHECK(stopped->deleted == 7);
  const auto rest = RunHistoryPruner(state, 7).prune(std::chrono::hours(24 * 30), [] { return false; });
  REQUIRE(rest.ok());
  CHECK(rest->complete);
  CHECK(rest->deleted == 13);
}

TEST_CASE("the run history is pruned by one member at a time") {
  PgTestEnv env;
  PgConnection& state = env.state();
  migrate_state_schema(state);
  add_runs(state, "healthy", "schedule", "success", 10, 40);
  add_runs(state, "healthy", "schedule", "success", 1, 1);
  // Another member's batch, in flight: it holds the pruning lock.
  PgConnection other(env.dsn("target"), "other");  // the state is in the target's database
  other.exec("begin; select pg_advisory_xact_lock(1953064037, 1)");
  const auto pruned = RunHistoryPruner(state, 7).prune(std::chrono::hours(24 * 30));
  REQUIRE(pruned.ok());
  CHECK(pruned->busy);
  CHECK(pruned->deleted == 0);
  other.exec("rollback");
  const auto after = RunHistoryPruner(state, 7).prune(std::chrono::hours(24 * 30));
  REQUIRE(after.ok());
  CHECK(after->deleted == 10);
}

}  // namespace tidemark
