// A partition table's firing against in-memory ports.
#include <doctest/doctest.h>

#include "core/time/instant_text.h"
#include "core/run/partition_run.h"
#include "fake_ports.h"

namespace tidemark {
namespace {

Instant at(const char* text) { return *parse_instant(text); }

struct Harness : FakeRunPorts {
  Harness() {
    pipeline.name = "p";
    pipeline.zone = date::locate_zone("Europe/Berlin");
    table.name = "daily";
    table.mode = TableMode::Partition;
    table.partition = PartitionSpec{"day", PartitionUnit::Day};
  }
  RunSummary run() {
    return PartitionRun(context()).execute(RunTrigger::Schedule);
  }
  std::string written() const {
    std::string out;
    for (const auto& w : target.partitions_written) out += (out.empty() ? "" : " ") + format_instant(w.lo);
    return out;
  }
};

}  // namespace

TEST_CASE("a firing writes every due partition oldest first, each its own run") {
  Harness h;
  h.table.initial = "2026-03-27";
  h.source.now = at("2026-03-30T10:00:00Z");
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::Success);
  CHECK(s.chunks == 3);
  CHECK(h.written() == "2026-03-26T23:00:00Z 2026-03-27T23:00:00Z 2026-03-28T23:00:00Z");
  CHECK(h.state.runs.size() == 3);
  CHECK_FALSE(h.state.locked);
  // The next firing the same day has nothing to do: today is still filling.
  h.source.now = at("2026-03-30T21:00:00Z");
  CHECK(h.run().chunks == 0);
  CHECK(h.state.runs.size() == 3);
}

TEST_CASE("a failed partition stops the firing; the next one retries it first") {
  Harness h;
  h.table.initial = "2026-03-27";
  h.source.now = at("2026-03-30T10:00:00Z");
  h.target.fail_partition = at("2026-03-27T23:00:00Z");
  RunSummary s = h.run();
  CHECK(s.status == RunStatus::Failed);
  CHECK(h.written() == "2026-03-26T23:00:00Z");
  CHECK(h.state.partitions.at(at("2026-03-27T23:00:00Z")).second == "failed");
  h.target.fail_partition.reset();
  s = h.run();
  CHECK(s.status == RunStatus::Success);
  CHECK(h.written() == "2026-03-26T23:00:00Z 2026-03-27T23:00:00Z 2026-03-28T23:00:00Z");
}

TEST_CASE("a partition a backfill is writing is left to it: the firing stops there") {
  Harness h;
  h.table.initial = "2026-03-27";
  h.source.now = at("2026-03-30T10:00:00Z");
  h.state.partition_locks_elsewhere.insert(at("2026-03-27T23:00:00Z"));
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::Success);
  CHECK(h.written() == "2026-03-26T23:00:00Z");
}

TEST_CASE("without initial and without history only the last complete partition is written") {
  Harness h;
  h.source.now = at("2026-10-26T09:00:00Z");
  h.run();
  CHECK(h.written() == "2026-10-24T22:00:00Z");  // the 25-hour 2026-10-25
  CHECK(h.target.partitions_written[0].hi - h.target.partitions_written[0].lo == std::chrono::hours(25));
}

TEST_CASE("the table's lock held elsewhere skips the firing") {
  Harness h;
  h.state.held_elsewhere = true;
  CHECK(h.run().status == RunStatus::SkippedLocked);
  CHECK(h.target.partitions_written.empty());
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("a transaction still open since before a partition's end holds that partition back") {
  Harness h;
  h.table.initial = "2026-03-28";
  h.source.now = at("2026-03-30T10:00:00Z");
  OpenTransaction open;
  open.started = std::chrono::duration_cast<std::chrono::microseconds>(
                     at("2026-03-29T21:30:00Z").time_since_epoch())
                     .count();  // 23:30 in Berlin on the 29th
  open.pid = 7;
  h.source.open = open;
  RunSummary s = h.run();
  CHECK(s.status == RunStatus::Success);
  CHECK(h.written() == "2026-03-27T23:00:00Z");  // the 28th only: the 29th may still receive rows
  CHECK(s.horizon.held_by.find("pid 7") != std::string::npos);
  h.source.open.reset();
  s = h.run();
  CHECK(h.written() == "2026-03-27T23:00:00Z 2026-03-28T23:00:00Z");
}

TEST_CASE("a prepared transaction holds every partition back") {
  Harness h;
  h.table.initial = "2026-03-28";
  h.source.now = at("2026-03-30T10:00:00Z");
  OpenTransaction prepared;
  prepared.prepared = true;
  prepared.application_name = "gid";
  h.source.open = prepared;
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::Success);
  CHECK(s.chunks == 0);
  CHECK(s.horizon.held_by.find("prepared") != std::string::npos);
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("regression: a firing whose partition's run row could not be closed reported plain success") {
  Harness h;
  h.table.initial = "2026-03-28";
  h.source.now = at("2026-03-30T10:00:00Z");
  h.state.fail_finish = "state database gone";
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::Success);  // both partitions committed
  CHECK(s.chunks == 2);
  CHECK(s.error ==
        "the run succeeded but its run row could not be updated: state database gone; "
        "the run succeeded but its run row could not be updated: state database gone");
}

TEST_CASE("a lock that cannot be asked for fails the firing with the store's error kind") {
  Harness h;
  struct Unreachable final : StateStore {
    Result<bool> lock(const RunLock&, bool) override {
      return permanent_error("state: permission denied for function pg_try_advisory_lock");
    }
    void unlock(const RunLock&) override {}
    Result<OpenedRun> open_run(const RunStart&) override { return Error{"unused"}; }
    Status finish_run(RunId, const RunEnd&) override { return ok_status(); }
    Result<std::optional<StoredWatermark>> read_watermark(const TableKey&) override { return Error{"unused"}; }
    Result<std::vector<CursorSample>> read_cursor_samples(const TableKey&, const std::string&) override {
      return std::vector<CursorSample>{};
    }
    Result<std::optional<ChangeCount>> last_change_count(const TableKey&) override {
      return std::optional<ChangeCount>();
    }
    Status save_cursor_samples(const TableKey&, const std::string&, std::optional<SourceMicros>,
                               const std::optional<CursorSample>&) override {
      return ok_status();
    }
    Result<std::optional<Instant>> last_done_partition(const TableKey&) override { return std::optional<Instant>(); }
    Result<std::vector<Instant>> done_partitions(const TableKey&, Instant, Instant) override {
      return std::vector<Instant>{};
    }
    Status mark_partition_failed(const TableKey&, const TimeWindow&, RunId) override { return ok_status(); }
    Result<std::vector<bool>> try_lock_all(const std::vector<RunLock>&) override { return Error{"unused"}; }
    void unlock_all(const std::vector<RunLock>&) override {}
    Result<TablesRead> read_tables(const std::vector<TableKey>&) override { return Error{"unused"}; }
    Result<std::vector<QuietRunRecorded>> record_quiet_runs(const std::vector<QuietRun>&) override {
      return Error{"unused"};
    }
    Result<std::vector<FlaggedPartition>> flagged_partitions(const TableKey&) override { return Error{"unused"}; }
    Status clear_flag(const TableKey&, Instant) override { return Error{"unused"}; }
    Status flag_downstream(const DownstreamRecheck&) override { return Error{"unused"}; }
    Result<std::vector<InputState>> read_inputs(const std::vector<TableRef>&) override { return Error{"unused"}; }
    Result<RunId> record_run(const RunStart&, const RunEnd&) override { return Error{"unused"}; }
    void announce_moved(const TableKey&) override {}
  } unreachable;
  const RunSummary s =
      PartitionRun(RunContext{h.pipeline, h.table, unreachable, h.source, h.target, h.observer, h.cancel, sole_owner()})
          .execute(RunTrigger::Schedule);
  CHECK(s.status == RunStatus::Failed);
  CHECK(s.error == "cannot take the table's lock: state: permission denied for function pg_try_advisory_lock");
  CHECK(s.error_kind == ErrorKind::Permanent);
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("regression: a partition firing that failed before its first partition was heard by no one") {
  // The metrics count runs from the observer: a source that could not be
  // reached left tidemark_runs_total as it was.
  Harness h;
  h.table.initial = "2026-03-28";
  h.source.now = at("2026-03-30T10:00:00Z");
  h.source.fail_with = "source: connection refused";
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::Failed);
  REQUIRE(h.observer.finished.size() == 1);
  CHECK(h.observer.finished[0].status == RunStatus::Failed);
  CHECK(h.observer.finished[0].error == "source: connection refused");
  CHECK(h.state.runs.empty());  // a firing has no run row of its own

  // Partitions written: each is heard, the firing's success is theirs.
  h.source.fail_with.clear();
  h.observer.finished.clear();
  REQUIRE(h.run().status == RunStatus::Success);
  CHECK(h.observer.finished.size() == 2);
  CHECK(h.state.runs.size() == 2);
}

}  // namespace tidemark
