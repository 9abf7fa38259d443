// The job-kind table: which tables have each kind, its schedule, and the
// words and triggers its run rows carry.
#include "core/schedule/job_kinds.h"

#include <doctest/doctest.h>

#include "schedule_test_config.h"

namespace tidemark {

using testing::config_of_pipeline;

namespace {

Config two_tables() {
  return config_of_pipeline(R"(pipeline: p
source: w
target: w
schedule: "*/5 * * * *"
tables:
  - { name: plain, source_table: s.a, target_table: r.a, key: [id], cursor: id }
  - name: reconciled
    source_table: s.b
    target_table: r.b
    key: [id]
    cursor: updated_at
    deletes: { reconcile: "0 3 * * *" }
)");
}

}  // namespace

TEST_CASE("the rows are in the order of JobKind, and each word names its own kind") {
  REQUIRE(job_kinds().size() == 2);
  for (std::size_t i = 0; i < job_kinds().size(); ++i) {
    const JobKindSpec& spec = job_kinds()[i];
    CHECK(static_cast<std::size_t>(spec.kind) == i);
    CHECK(&job_kind(spec.kind) == &spec);
    CHECK(job_kind_named(spec.word) == spec.kind);
  }
  CHECK(job_kind(JobKind::Load).word == "load");
  CHECK(job_kind(JobKind::Reconcile).word == "reconcile");
  CHECK_FALSE(job_kind_named("repair").has_value());  // a newer build's kind: no job here
  CHECK_FALSE(job_kind_named("").has_value());
}

TEST_CASE("every table has a load; a reconcile only with deletes.reconcile, on its own schedule") {
  const Config config = two_tables();
  const TableConfig& plain = config.pipelines[0].tables[0];
  const TableConfig& reconciled = config.pipelines[0].tables[1];
  CHECK(job_kind(JobKind::Load).has(plain));
  CHECK(job_kind(JobKind::Load).has(reconciled));
  CHECK_FALSE(job_kind(JobKind::Reconcile).has(plain));
  CHECK(job_kind(JobKind::Reconcile).has(reconciled));
  CHECK(job_kind(JobKind::Load).schedule(reconciled).expression() == "*/5 * * * *");
  CHECK(job_kind(JobKind::Reconcile).schedule(reconciled).expression() == "0 3 * * *");
}

TEST_CASE("a run's kind: a reconcile's trigger is a reconcile, every other trigger fires a load") {
  CHECK(job_kind_of(RunTrigger::Reconcile) == JobKind::Reconcile);
  for (const RunTrigger t : {RunTrigger::Schedule, RunTrigger::Manual, RunTrigger::Startup, RunTrigger::Backfill,
                             RunTrigger::Retry, RunTrigger::Takeover, RunTrigger::Input}) {
    CHECK(job_kind_of(t) == JobKind::Load);
  }
}

TEST_CASE("loads batch and skip a held lock; a reconcile does neither") {
  CHECK(job_kind(JobKind::Load).batches);
  CHECK(job_kind(JobKind::Load).held_lock == HeldLock::Skip);
  CHECK_FALSE(job_kind(JobKind::Reconcile).batches);
  CHECK(job_kind(JobKind::Reconcile).held_lock == HeldLock::RetryAfterBackoff);
}

}  // namespace tidemark
