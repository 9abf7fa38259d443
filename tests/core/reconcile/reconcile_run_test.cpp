// ReconcileRun over the fakes: what it compares, what it reads, what it
// commits and records, and what a dry run, a held lock, a missing
// watermark and a failure in the middle leave behind.
#include <doctest/doctest.h>

#include "core/reconcile/reconcile_run.h"
#include "fake_key_side.h"

namespace tidemark {
namespace {

// 1..n in the source and the target, all below the watermark 1,000,000.
struct Harness : FakeRunPorts {
  FakeKeySide source_keys{&source.rows};
  FakeKeySide target_keys{nullptr, &target.rows};

  explicit Harness(int n = 100) {
    pipeline.name = "p";
    table.name = "t";
    table.key = {"id"};
    table.cursor = "c";
    table.source_table = *QualifiedName::parse("s.t");
    table.target_table = *QualifiedName::parse("r.t");
    state.watermark = CursorValue{CursorType::Integer, 1000000};
    for (int k = 1; k <= n; ++k) {
      source.rows.push_back(FakeRow{k, k});
      target.rows[k] = k;
    }
  }

  void delete_in_source(std::int64_t key) {
    source.rows.erase(std::remove_if(source.rows.begin(), source.rows.end(),
                                     [&](const FakeRow& r) { return r.key == key; }),
                      source.rows.end());
  }

  ReconcileReport reconcile(ReconcileRequest request = {}) {
    return ReconcileRun(context(), source_keys, target_keys).execute(request);
  }
};

}  // namespace

TEST_CASE("reconcile of equal key sets compares two aggregates and reads no key") {
  Harness h;
  const ReconcileReport r = h.reconcile();
  CHECK(r.run.status == RunStatus::Success);
  CHECK(r.buckets == 1);
  CHECK(r.differing_buckets == 0);
  CHECK(r.keys_fetched == 0);
  CHECK(h.source_keys.sums_asked == 1);
  CHECK(h.target_keys.sums_asked == 1);
  CHECK(h.source_keys.keys_asked == 0);
  CHECK(h.target.commits == 0);
  // A run row with its trigger and zero counts.
  REQUIRE(h.state.runs.size() == 1);
  CHECK(h.state.runs[0].start.trigger == RunTrigger::Reconcile);
  REQUIRE(h.state.runs[0].end);
  CHECK(h.state.runs[0].end->success);
  CHECK(h.state.runs[0].end->reconcile->deleted == 0);
  CHECK(h.state.runs[0].end->reconcile->missing == 0);
  CHECK_FALSE(h.state.locked);  // released
}

TEST_CASE("both sides count and list at once: each step is sent to both before either is collected") {
  Harness h;
  std::vector<std::string> steps;
  h.source_keys.steps = &steps;
  h.source_keys.name = "source";
  h.target_keys.steps = &steps;
  h.target_keys.name = "target";
  h.delete_in_source(10);
  const ReconcileReport r = h.reconcile();
  CHECK(r.run.status == RunStatus::Success);
  CHECK(r.counts.deleted == 1);
  CHECK(steps == std::vector<std::string>{"source sends sums", "target sends sums", "source collects sums",
                                          "target collects sums", "source sends listing", "target sends listing",
                                          "source collects listing", "target collects listing"});
}

TEST_CASE("a side that cannot count fails the reconcile after the other side's count is collected") {
  Harness h;
  h.target_keys.fail_send = "target gone";
  const ReconcileReport r = h.reconcile();
  CHECK(r.run.status == RunStatus::Failed);
  CHECK(r.run.error.find("target gone") != std::string::npos);
  CHECK(h.source_keys.sums_asked == 1);  // sent and collected, never left in flight
  CHECK(h.target.commits == 0);
}

TEST_CASE("rows deleted in the source are deleted in the target and counted, with the record in the same commit") {
  Harness h;
  for (const int k : {10, 20, 30}) h.delete_in_source(k);
  const ReconcileReport r = h.reconcile();
  CHECK(r.run.status == RunStatus::Success);
  CHECK(r.counts.deleted == 3);
  CHECK(r.counts.missing == 0);
  CHECK(h.target.rows.size() == 97);
  CHECK(h.target.rows.count(20) == 0);
  REQUIRE(h.target.records.size() == 1);
  CHECK(h.target.records[0].reconcile->deleted == 3);
  CHECK_FALSE(h.target.records[0].move);  // the watermark stays
  CHECK(h.state.watermark == CursorValue{CursorType::Integer, 1000000});
  CHECK(h.state.runs[0].end->reconcile->deleted == 3);
  CHECK(r.deleted_examples == std::vector<std::string>{"(10)", "(20)", "(30)"});
}

TEST_CASE("target rows missing below the watermark are copied again and counted; above it, left to the load") {
  Harness h;
  h.target.rows.erase(5);
  h.target.rows.erase(6);
  h.source.rows.push_back(FakeRow{500, 2000000});  // above the watermark: not loaded yet
  const ReconcileReport r = h.reconcile();
  CHECK(r.run.status == RunStatus::Success);
  CHECK(r.counts.missing == 2);
  CHECK(r.counts.deleted == 0);
  CHECK(h.target.rows.count(5) == 1);
  CHECK(h.target.rows.count(500) == 0);
  REQUIRE(h.target.fixes.size() == 1);
  CHECK(h.target.fixes[0].recopy.size() == 2);
  CHECK(h.target.fixes[0].watermark == CursorValue{CursorType::Integer, 1000000});
  CHECK(h.state.runs[0].end->reconcile->missing == 2);
}

TEST_CASE("a dry run counts, keeps examples, and writes nothing, not even a run row") {
  Harness h;
  h.delete_in_source(1);
  h.target.rows.erase(2);
  ReconcileRequest dry;
  dry.dry_run = true;
  const ReconcileReport r = h.reconcile(dry);
  CHECK(r.run.status == RunStatus::Success);
  CHECK(r.counts.deleted == 1);
  CHECK(r.counts.missing == 1);
  CHECK(r.missing_examples == std::vector<std::string>{"(2)"});
  CHECK(h.state.runs.empty());
  CHECK(h.target.commits == 0);
  CHECK(h.target.begun.empty());
  CHECK(h.target.rows.count(1) == 1);
  CHECK_FALSE(h.state.locked);
}

TEST_CASE("a held lock: skipped when not waiting, nothing compared") {
  Harness h;
  h.state.held_elsewhere = true;
  ReconcileRequest scheduled;
  scheduled.wait_for_lock = false;
  const ReconcileReport r = h.reconcile(scheduled);
  CHECK(r.run.status == RunStatus::SkippedLocked);
  CHECK(h.source_keys.sums_asked == 0);
  CHECK(h.state.runs.empty());
}

TEST_CASE("no watermark yet: nothing is claimed, nothing compared") {
  Harness h;
  h.state.watermark.reset();
  const ReconcileReport r = h.reconcile();
  CHECK(r.run.status == RunStatus::Success);
  CHECK(r.no_watermark);
  CHECK(h.source_keys.sums_asked == 0);
}

TEST_CASE("regression: a reconcile of a table not loaded yet whose source could not be read was recorded a success") {
  Harness h;
  h.state.watermark.reset();
  h.source.fail_with = "cannot connect to source";
  const ReconcileReport r = h.reconcile();
  CHECK(r.run.status == RunStatus::Failed);
  CHECK(r.run.error == "cannot connect to source");
  REQUIRE(h.state.runs.size() == 1);
  CHECK_FALSE(h.state.runs[0].end->success);
  CHECK(h.source_keys.sums_asked == 0);
}

TEST_CASE("batches commit one by one: a failure keeps what committed, and a rerun finishes the rest") {
  Harness h(3000);  // 30 buckets of 100 keys
  h.source_keys.estimate = 3000;
  for (const int k : {3, 4, 5, 3000}) h.delete_in_source(k);  // buckets 3, 4, 5 and 0
  ReconcileRequest request;
  request.batch_keys = 250;  // a bucket (about 200 keys of both sides) a batch
  h.target.fail_reconcile.clear();
  // The second batch fails.
  int batch = 0;
  h.target.before_record = [&] {
    if (++batch == 2) h.target.fail_commit = "connection lost";
  };
  const ReconcileReport failed = h.reconcile(request);
  CHECK(failed.run.status == RunStatus::Failed);
  CHECK(failed.run.error == "connection lost");
  CHECK(failed.batches == 2);
  CHECK(failed.counts.deleted == 1);  // the first batch (bucket 0) only: what committed
  CHECK(h.state.runs[0].end->reconcile->deleted == 1);
  CHECK(h.target.rows.size() == 2999);

  h.target.before_record = nullptr;
  h.target.fail_commit.clear();
  const ReconcileReport rerun = h.reconcile(request);
  CHECK(rerun.run.status == RunStatus::Success);
  CHECK(rerun.differing_buckets == 3);  // the committed bucket matches now
  CHECK(rerun.counts.deleted == 3);
  CHECK(h.target.rows.size() == 2996);
}

TEST_CASE("action mark passes its column to the unit of work; action delete none") {
  Harness h;
  h.delete_in_source(7);
  h.table.deletes = DeletesConfig{std::nullopt, DeleteAction::Mark, "deleted_at", {}, {}};
  h.reconcile();
  REQUIRE(h.target.fixes.size() == 1);
  CHECK(h.target.fixes[0].mark_column == "deleted_at");
  CHECK(reconcile_mark_column(TableConfig{}).empty());
}

TEST_CASE("a failure reading keys fails the run with it, having committed nothing") {
  Harness h;
  h.delete_in_source(1);
  h.target_keys.fail_keys = "canceling statement due to statement timeout";
  const ReconcileReport r = h.reconcile();
  CHECK(r.run.status == RunStatus::Failed);
  CHECK(r.run.error == "canceling statement due to statement timeout");
  CHECK(h.target.commits == 0);
  CHECK_FALSE(h.state.runs[0].end->success);
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("regression: a key written again in the source after the listing is not deleted from the target") {
  Harness h;
  h.delete_in_source(7);
  h.delete_in_source(8);
  // Key 7 comes back (a delete and insert) once the listing is taken, with
  // a cursor below the watermark: no load would ever copy it again.
  h.source_keys.after_open = [&] { h.source.rows.push_back(FakeRow{7, 7}); };
  const ReconcileReport r = h.reconcile();
  REQUIRE(r.run.status == RunStatus::Success);
  CHECK(h.target.rows.count(7) == 1);
  CHECK(h.target.rows.count(8) == 0);
  CHECK(r.counts.deleted == 1);
  CHECK(h.source_keys.held_asked == 1);
}

TEST_CASE("an empty source table is refused: reconcile never deletes every target row") {
  Harness h;
  h.source.rows.clear();  // a wrong DSN, a restore in progress
  const ReconcileReport r = h.reconcile();
  CHECK(r.run.status == RunStatus::Failed);
  CHECK(r.run.error_kind == ErrorKind::Permanent);
  CHECK(r.run.error.find("holds no row") != std::string::npos);
  CHECK(h.target.rows.size() == 100);
  CHECK(h.target.commits == 0);
  CHECK(r.counts.deleted == 0);
}

TEST_CASE("every source row updated past the watermark is not an empty source: nothing is deleted") {
  Harness h;
  for (FakeRow& row : h.source.rows) row.cursor = 2000000;  // all changed since the last load
  const ReconcileReport r = h.reconcile();
  CHECK(r.run.status == RunStatus::Success);
  CHECK(r.counts.deleted == 0);
  CHECK(r.counts.missing == 0);
  CHECK(h.target.rows.size() == 100);
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("rows changed below the watermark without their cursor moving are copied again, counted and recorded") {
  Harness h;
  // The application changed rows 3 and 4 but their cursor stays below the
  // watermark (an identity, an updated_at nobody stamped): no load sees them.
  for (FakeRow& row : h.source.rows) {
    if (row.key == 3 || row.key == 4) row.cursor += 500;
  }
  h.source.rows.push_back(FakeRow{5000, 3000000});  // above the watermark: the next load's, not a repair
  h.target.rows[6] = 999;                           // the target's copy of 6 was changed there
  const ReconcileReport r = h.reconcile();
  REQUIRE(r.run.status == RunStatus::Success);
  CHECK(r.counts.changed == 3);
  CHECK(r.counts.missing == 0);
  CHECK(r.counts.deleted == 0);
  CHECK(r.changed_examples == std::vector<std::string>{"(3)", "(4)", "(6)"});
  CHECK(h.target.rows.at(3) == 503);
  CHECK(h.target.rows.at(6) == 6);
  CHECK(h.target.rows.count(5000) == 0);
  REQUIRE(h.target.records.size() == 1);
  CHECK(h.target.records[0].reconcile->changed == 3);
  CHECK(h.state.runs[0].end->reconcile->changed == 3);

  // Repaired: the next reconcile finds the sides equal.
  const ReconcileReport again = h.reconcile();
  CHECK(again.counts.changed == 0);
  CHECK(again.differing_buckets == 0);
}

TEST_CASE("a dry run counts changed rows and names them, copying nothing") {
  Harness h;
  h.target.rows[9] = 77;
  ReconcileRequest dry;
  dry.dry_run = true;
  const ReconcileReport r = h.reconcile(dry);
  CHECK(r.counts.changed == 1);
  CHECK(r.changed_examples == std::vector<std::string>{"(9)"});
  CHECK(h.target.rows.at(9) == 77);
  CHECK(h.target.commits == 0);
}

TEST_CASE("a column whose type differs between the sides is named and left out of the comparison") {
  Harness h;
  h.target.columns = std::vector<ColumnShape>{{"id", "bigint", true, true}, {"c", "numeric", true}};
  const ReconcileReport r = h.reconcile();
  CHECK(r.run.status == RunStatus::Success);
  CHECK(r.uncompared == std::vector<std::string>{"c"});
  REQUIRE(h.source_keys.compared.size() == 1);
  CHECK(h.source_keys.compared[0].name == "id");
  CHECK(h.source_keys.compared[0].source_type == "bigint");
  CHECK(h.source_keys.compared[0].target_type == "bigint");
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("rows a reconcile repairs flag every done partition of its partition dependents, with the batch") {
  Harness h;
  h.pipeline.zone = date::locate_zone("UTC");
  h.table.dependents = {TableRef{"marts", "daily", TableMode::Partition, nullptr},
                        TableRef{"marts", "lines", TableMode::Incremental, nullptr}};
  h.delete_in_source(60);
  h.target.rows.erase(40);  // missing below the watermark: copied again
  const ReconcileReport r = h.reconcile();
  CHECK(r.run.status == RunStatus::Success);
  // Which of a dependent's partitions read the rows its cursor does not
  // say (a mart partitions by when an order was placed, the input's
  // cursor is when it changed): all of them are checked again.
  REQUIRE(h.state.downstream.size() == 1);
  CHECK(h.state.downstream[0].tables == std::vector<TableKey>{TableKey{"marts", "daily"}});
  CHECK(h.state.downstream[0].from == kCalendarStart);
  CHECK(h.state.downstream[0].because == "input p.t repaired by reconcile");
  // And the fleet hears of it: the dependents run soon.
  CHECK(h.state.announced.empty());  // announced by the runner that ran it (job_runner), not the run class

  // A reconcile that changes nothing flags nothing.
  h.state.downstream.clear();
  CHECK(h.reconcile().run.status == RunStatus::Success);
  CHECK(h.state.downstream.empty());
}

}  // namespace tidemark
