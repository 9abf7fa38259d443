// The run row's words, and the statements spelled with them.
#include "daemon/pg/runs_table.h"

#include <doctest/doctest.h>

namespace tidemark {

TEST_CASE("a statement's word marks become the run row's words as literals, other braces stay") {
  CHECK(run_row_sql("where status = {success} and kind = {reconcile} and status <> {running}") ==
        "where status = 'success' and kind = 'reconcile' and status <> 'running'");
  CHECK(run_row_sql("set status = {failed}, error_kind = {transient}, kind = {load}") ==
        "set status = 'failed', error_kind = 'transient', kind = 'load'");
  CHECK(run_row_sql("select '{}'::jsonb, '{a,b}'::text[], {other}") == "select '{}'::jsonb, '{a,b}'::text[], {other}");
}

TEST_CASE("a run's kind: a reconcile's run is a reconcile, every other trigger fires a load") {
  CHECK(job_kind_of(RunTrigger::Reconcile) == JobKind::Reconcile);
  for (const RunTrigger t : {RunTrigger::Schedule, RunTrigger::Manual, RunTrigger::Startup, RunTrigger::Backfill,
                             RunTrigger::Retry, RunTrigger::Takeover}) {
    CHECK(job_kind_of(t) == JobKind::Load);
  }
  CHECK(job_kind_named(job_kind_word(JobKind::Reconcile)) == JobKind::Reconcile);
  CHECK(job_kind_named(job_kind_word(JobKind::Load)) == JobKind::Load);
  CHECK(run_row_status_word(RunRowStatus::Running) == "running");
  CHECK(run_row_status_word(RunRowStatus::Success) == "success");
  CHECK(run_row_status_word(RunRowStatus::Failed) == "failed");
}

}  // namespace tidemark
