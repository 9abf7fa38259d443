// The frame every run shares (core/run_lifecycle.h): lock, abandoned
// rows, run row, report, on every path, for each kind of run.
#include <doctest/doctest.h>

#include "core/run/cursor_backfill.h"
#include "core/time/instant_text.h"
#include "core/run/partition_writer.h"
#include "core/run/run_lifecycle.h"
#include "fake_ports.h"

namespace tidemark {
namespace {

const RunLock kTable{TableKey{"p", "t"}, std::nullopt};

TimeWindow day(const char* lo, const char* hi) { return TimeWindow{*parse_instant(lo), *parse_instant(hi)}; }

}  // namespace

TEST_CASE("a finished run closes its row, releases its lock and reports once") {
  FakeRunPorts f;
  {
    RunLifecycle run(f.state, sole_owner(), f.observer, kTable, RunTrigger::Manual);
    REQUIRE(run.open(false));
    CHECK(f.state.locked);
    const RunSummary& s = run.finish(ok_status(), false);
    CHECK(s.status == RunStatus::Success);
  }
  CHECK_FALSE(f.state.locked);
  REQUIRE(f.state.runs.size() == 1);
  CHECK(f.state.runs[0].end->success);
  CHECK(f.observer.finished.size() == 1);
}

TEST_CASE("a run opened and never finished is closed as failed, its lock released") {
  FakeRunPorts f;
  {
    RunLifecycle run(f.state, sole_owner(), f.observer, kTable, RunTrigger::Manual);
    REQUIRE(run.open(false));
  }
  CHECK_FALSE(f.state.locked);
  REQUIRE(f.state.runs.size() == 1);
  REQUIRE(f.state.runs[0].end);
  CHECK_FALSE(f.state.runs[0].end->success);
  CHECK(f.state.runs[0].end->error == "the run ended without recording how");
  CHECK(f.observer.finished.size() == 1);
}

TEST_CASE("a lock held elsewhere skips the run: no row, reported as skipped") {
  FakeRunPorts f;
  f.state.held_elsewhere = true;
  RunLifecycle run(f.state, sole_owner(), f.observer, kTable, RunTrigger::Schedule);
  CHECK_FALSE(run.open(false));
  CHECK(run.finish(ok_status(), false).status == RunStatus::SkippedLocked);
  CHECK(f.state.runs.empty());
  CHECK(f.observer.finished.size() == 1);
}

TEST_CASE("a table this process no longer owns once it holds the lock is skipped: the lock let go, no row") {
  FakeRunPorts f;
  FakeOwnership fleet([&](const TableKey&) { return f.state.locked; });
  fleet.given_away.insert(kTable.table);
  RunLifecycle run(f.state, fleet, f.observer, kTable, RunTrigger::Schedule);
  CHECK_FALSE(run.open(false));
  CHECK(fleet.asked == 1);
  CHECK(fleet.asked_unlocked == 0);  // asked under the lock, so a takeover cannot slip in between
  CHECK_FALSE(f.state.locked);
  CHECK(run.finish(ok_status(), false).status == RunStatus::SkippedLocked);
  CHECK(f.state.runs.empty());
  CHECK(f.observer.finished.size() == 1);
}

TEST_CASE("ownership is asked of a table's lock only: a partition's is taken under its table's") {
  FakeRunPorts f;
  FakeOwnership fleet([&](const TableKey&) { return f.state.locked; });
  RunLifecycle owned(f.state, fleet, f.observer, kTable, RunTrigger::Schedule);
  REQUIRE(owned.open(false));
  CHECK(fleet.asked == 1);
  owned.finish(ok_status(), false);
  fleet.given_away.insert(kTable.table);
  RunLifecycle partition(f.state, fleet, f.observer,
                         RunLock{kTable.table, day("2026-03-01T00:00:00Z", "2026-03-02T00:00:00Z")},
                         RunTrigger::Schedule);
  CHECK(partition.open(false));
  CHECK(fleet.asked == 1);
  partition.finish(ok_status(), false);
}

TEST_CASE("a run row that cannot be opened fails the run and still releases the lock") {
  FakeRunPorts f;
  f.state.fail_open = "state database gone";
  RunLifecycle run(f.state, sole_owner(), f.observer, kTable, RunTrigger::Schedule);
  CHECK_FALSE(run.open(false));
  const RunSummary& s = run.finish(ok_status(), false);
  CHECK(s.status == RunStatus::Failed);
  CHECK(s.error == "state database gone");
  CHECK_FALSE(f.state.locked);
}

TEST_CASE("a failure's kind reaches the summary and the run row; cancellation is not a failure") {
  FakeRunPorts f;
  {
    RunLifecycle run(f.state, sole_owner(), f.observer, kTable, RunTrigger::Schedule);
    REQUIRE(run.open(false));
    const RunSummary& s = run.finish(permanent_error("target table t has no column c"), false);
    CHECK(s.status == RunStatus::Failed);
    CHECK(s.error_kind == ErrorKind::Permanent);
  }
  CHECK(f.state.runs[0].end->error == "target table t has no column c");
  CHECK(f.state.runs[0].end->error_kind == ErrorKind::Permanent);
  // Stopped by a shutdown: whatever the error, another run would go on.
  RunLifecycle cancelled(f.state, sole_owner(), f.observer, kTable, RunTrigger::Schedule);
  REQUIRE(cancelled.open(false));
  CHECK(cancelled.finish(permanent_error("cancelled"), true).status == RunStatus::Cancelled);
  CHECK(f.state.runs[1].end->error_kind == ErrorKind::Transient);
}

TEST_CASE("a partition's run marks only its own window's rows abandoned, and the partition failed when it fails") {
  FakeRunPorts f;
  const TimeWindow first = day("2026-03-01T00:00:00Z", "2026-03-02T00:00:00Z");
  const TimeWindow second = day("2026-03-02T00:00:00Z", "2026-03-03T00:00:00Z");
  // Two rows a crash left running, one per partition.
  RunLifecycle crashed_first(f.state, sole_owner(), f.observer, RunLock{kTable.table, first}, RunTrigger::Backfill);
  REQUIRE(crashed_first.open(false));
  f.state.partition_locks.clear();
  RunLifecycle crashed_second(f.state, sole_owner(), f.observer, RunLock{kTable.table, second}, RunTrigger::Backfill);
  REQUIRE(crashed_second.open(false));
  f.state.partition_locks.clear();

  RunLifecycle run(f.state, sole_owner(), f.observer, RunLock{kTable.table, first}, RunTrigger::Schedule);
  REQUIRE(run.open(false));
  CHECK(f.state.abandoned_marked == 1);
  CHECK(f.state.runs[0].end->error == "abandoned");
  CHECK_FALSE(f.state.runs[1].end);  // the other partition's run may still be alive
  run.finish(Error{"injected failure"}, false);
  CHECK(f.state.partitions.at(first.lo).second == "failed");
  CHECK(f.state.partition_locks.count(first.lo) == 0);
}

TEST_CASE("regression: a cursor backfill left a crashed backfill's row running; it marks it abandoned") {
  FakeRunPorts f;
  f.pipeline.name = "p";
  f.pipeline.zone = date::locate_zone("UTC");
  f.table.name = "t";
  f.table.key = {"id"};
  f.source.rows = {{1, 10}, {2, 20}};
  f.state.runs.push_back({RunStart{kTable.table, RunTrigger::Backfill, std::nullopt}, std::nullopt});
  const RunSummary s = CursorBackfill(f.context()).execute("0", "30");
  CHECK(s.status == RunStatus::Success);
  CHECK(f.state.abandoned_marked == 1);
  REQUIRE(f.state.runs.size() == 2);
  CHECK(f.state.runs[1].end->success);
  CHECK(f.state.runs[1].end->rows_read == 2);
  CHECK_FALSE(f.state.watermark);  // a backfill never moves it
  CHECK_FALSE(f.state.locked);
}

TEST_CASE("regression: a partition write whose run row could not be closed reported plain success") {
  FakeRunPorts f;
  f.pipeline.name = "p";
  f.pipeline.zone = date::locate_zone("UTC");
  f.table.name = "t";
  f.table.mode = TableMode::Partition;
  f.table.partition = PartitionSpec{"day", PartitionUnit::Day};
  f.state.fail_finish = "state database gone";
  const TimeWindow first = day("2026-03-01T00:00:00Z", "2026-03-02T00:00:00Z");
  const RunSummary s = PartitionWriter(f.context()).write(first, RunTrigger::Schedule, false);
  CHECK(s.status == RunStatus::Success);  // the partition itself committed
  CHECK(f.state.partitions.at(first.lo).second == "done");
  CHECK(s.error == "the run succeeded but its run row could not be updated: state database gone");
  CHECK(f.state.partition_locks.empty());
}

}  // namespace tidemark
