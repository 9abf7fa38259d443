// A partition table's reconcile against in-memory ports: every done
// partition its inputs still cover compared, those that differ written
// again (or only reported in a dry run).
#include <doctest/doctest.h>

#include "core/reconcile/partition_repair.h"
#include "core/run/partition_run.h"
#include "core/time/instant_text.h"
#include "fake_ports.h"

namespace tidemark {
namespace {

Instant at(const char* text) { return *parse_instant(text); }

// Five days written, 25 to 29 March in UTC.
struct Repair : FakeRunPorts {
  Repair() {
    pipeline.name = "p";
    pipeline.zone = date::locate_zone("UTC");
    table.name = "daily";
    table.mode = TableMode::Partition;
    table.partition = PartitionSpec{"day", PartitionUnit::Day};
    table.initial = "2026-03-25";
    source.now = at("2026-03-30T10:00:00Z");
    REQUIRE(PartitionRun(context()).execute(RunTrigger::Schedule).chunks == 5);
    target.partitions_written.clear();
  }
  ReconcileReport reconcile(bool dry_run) {
    ReconcileRequest request;
    request.dry_run = dry_run;
    return PartitionRepair(context()).execute(request);
  }
  std::string written() const {
    std::string out;
    for (const auto& w : target.partitions_written) out += (out.empty() ? "" : " ") + format_instant(w.lo);
    return out;
  }
};

}  // namespace

TEST_CASE("a partition reconcile compares every done partition, oldest first, and writes those that differ") {
  Repair r;
  r.target.differing[at("2026-03-25T00:00:00Z")] = PartitionComparison{2, 3, false};
  r.target.differing[at("2026-03-28T00:00:00Z")] = PartitionComparison{4, 4, false};

  ReconcileReport report = r.reconcile(/*dry_run=*/true);
  CHECK(report.run.status == RunStatus::Success);
  REQUIRE(report.partitions.size() == 5);
  CHECK(report.partitions[0].window.lo == at("2026-03-25T00:00:00Z"));
  CHECK(report.partitions[4].window.lo == at("2026-03-29T00:00:00Z"));
  CHECK_FALSE(report.partitions[0].found.equal());
  CHECK_FALSE(report.partitions[0].rewritten);
  CHECK(r.target.partitions_written.empty());
  const std::size_t rows = r.state.runs.size();
  CHECK(rows == 5);  // a dry run leaves no row

  report = r.reconcile(/*dry_run=*/false);
  CHECK(report.run.status == RunStatus::Success);
  CHECK(r.written() == "2026-03-25T00:00:00Z 2026-03-28T00:00:00Z");
  CHECK(report.partitions[0].rewritten);
  CHECK(report.partitions[3].rewritten);
  CHECK_FALSE(report.partitions[1].rewritten);
  CHECK(report.run.chunks == 2);
  // Each rewrite is a run of its own, of the reconcile, saying why.
  REQUIRE(r.state.runs.size() == rows + 2);
  CHECK(r.state.runs[rows].start.trigger == RunTrigger::Reconcile);
  CHECK(r.state.runs[rows].end->rewrite_reason == "reconcile: the query returns 2 rows, the target holds 3");
  CHECK(r.state.runs[rows + 1].end->rewrite_reason == "reconcile: the query returns other values in 4 rows");
  CHECK_FALSE(r.state.locked);

  report = r.reconcile(/*dry_run=*/false);
  CHECK(std::none_of(report.partitions.begin(), report.partitions.end(),
                     [](const PartitionChecked& p) { return p.rewritten || !p.found.equal(); }));
}

TEST_CASE("a partition reconcile leaves alone the partitions an input has not passed again, and says so") {
  Repair r;
  r.table.inputs = {TableRef{"shop", "orders", TableMode::Incremental, date::locate_zone("UTC")}};
  // The input was rewound into the 28th: the 28th and 29th would be compared with half their rows.
  r.state.inputs = {InputState{StoredWatermark{CursorValue{CursorType::TimestampTz,
                                                           std::chrono::duration_cast<std::chrono::microseconds>(
                                                               at("2026-03-28T06:00:00Z").time_since_epoch())
                                                               .count()}},
                               std::nullopt}};
  r.target.differing[at("2026-03-28T00:00:00Z")] = PartitionComparison{1, 9, false};
  const ReconcileReport report = r.reconcile(/*dry_run=*/false);
  CHECK(report.run.status == RunStatus::Success);
  CHECK(report.partitions.size() == 3);
  CHECK(report.partitions_not_complete == 2);
  CHECK(report.held_by == "waiting for shop.orders, at 2026-03-28T06:00:00Z");
  CHECK(r.target.partitions_written.empty());
}

TEST_CASE("a partition reconcile writes every other partition when one fails, then fails naming it") {
  Repair r;
  r.target.differing[at("2026-03-26T00:00:00Z")] = PartitionComparison{2, 3, false};
  r.target.differing[at("2026-03-27T00:00:00Z")] = PartitionComparison{2, 3, false};
  r.target.fail_partition = at("2026-03-26T00:00:00Z");
  const ReconcileReport report = r.reconcile(/*dry_run=*/false);
  CHECK(report.run.status == RunStatus::Failed);
  CHECK(report.run.error == "1 partition could not be written again; the first: injected failure");
  CHECK(r.written() == "2026-03-27T00:00:00Z");
  CHECK(report.partitions[1].error == "injected failure");
}

TEST_CASE("a partition reconcile skips the firing's lock held elsewhere, as the scheduler's reconcile does") {
  Repair r;
  r.state.held_elsewhere = true;
  ReconcileRequest request;
  request.wait_for_lock = false;
  const ReconcileReport report = PartitionRepair(r.context()).execute(request);
  CHECK(report.run.status == RunStatus::SkippedLocked);
  CHECK(r.target.compared.empty());
}

}  // namespace tidemark
