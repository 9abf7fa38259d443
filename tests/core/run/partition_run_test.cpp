// A partition table's firing against in-memory ports.
#include <doctest/doctest.h>

#include "core/time/instant_text.h"
#include "core/run/partition_run.h"
#include "core/run/table_run.h"
#include "fake_ports.h"

namespace tidemark {
namespace {

Instant at(const char* text) { return *parse_instant(text); }

struct PartitionRunHarness : FakeRunPorts {
  PartitionRunHarness() {
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
  PartitionRunHarness h;
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
  PartitionRunHarness h;
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
  PartitionRunHarness h;
  h.table.initial = "2026-03-27";
  h.source.now = at("2026-03-30T10:00:00Z");
  h.state.partition_locks_elsewhere.insert(at("2026-03-27T23:00:00Z"));
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::Success);
  CHECK(h.written() == "2026-03-26T23:00:00Z");
}

TEST_CASE("without initial and without history only the last complete partition is written") {
  PartitionRunHarness h;
  h.source.now = at("2026-10-26T09:00:00Z");
  h.run();
  CHECK(h.written() == "2026-10-24T22:00:00Z");  // the 25-hour 2026-10-25
  CHECK(h.target.partitions_written[0].hi - h.target.partitions_written[0].lo == std::chrono::hours(25));
}

TEST_CASE("the table's lock held elsewhere skips the firing") {
  PartitionRunHarness h;
  h.state.held_elsewhere = true;
  CHECK(h.run().status == RunStatus::SkippedLocked);
  CHECK(h.target.partitions_written.empty());
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("a transaction still open since before a partition's end holds that partition back") {
  PartitionRunHarness h;
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
  PartitionRunHarness h;
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
  PartitionRunHarness h;
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
  PartitionRunHarness h;
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
    Status clear_flag(const TableKey&, const FlaggedPartition&) override { return Error{"unused"}; }
    Status flag_downstream(const DownstreamRecheck&) override { return Error{"unused"}; }
    Result<InputsRead> read_inputs(const TableKey&, const std::vector<TableRef>&) override { return Error{"unused"}; }
    Result<RunId> record_run(const RunStart&, const RunEnd&) override { return Error{"unused"}; }
    void announce_moved(const TableKey&) override {}
    Result<std::vector<LoadRange>> load_ranges(const TableKey&) override { return Error{"unused"}; }
    Status plan_load_ranges(const TableKey&, RunId, const std::vector<PageRange>&) override { return Error{"unused"}; }
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
  PartitionRunHarness h;
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

namespace tidemark {
namespace {

SourceMicros micros_at(const char* text) {
  return std::chrono::duration_cast<std::chrono::microseconds>(at(text).time_since_epoch()).count();
}

// Ten days written, 20 to 29 March in Berlin; the source's clock on the 30th.
struct Written : PartitionRunHarness {
  Written() {
    table.initial = "2026-03-20";
    source.now = at("2026-03-30T10:00:00Z");
    REQUIRE(run().chunks == 10);
    target.partitions_written.clear();
    target.compared.clear();
  }
  std::string compared() const {
    std::string out;
    for (const auto& w : target.compared) out += (out.empty() ? "" : " ") + format_instant(w.lo);
    return out;
  }
  std::size_t rows_before = 0;
};

// Berlin's local midnight starting each day of March 2026 (CET until the 29th).
const char* const kMarch26 = "2026-03-25T23:00:00Z";
const char* const kMarch27 = "2026-03-26T23:00:00Z";
const char* const kMarch28 = "2026-03-27T23:00:00Z";
const char* const kMarch29 = "2026-03-28T23:00:00Z";
const char* const kMarch30 = "2026-03-29T22:00:00Z";

}  // namespace

TEST_CASE("lookback: each firing checks the done partitions it reaches and rewrites only those that differ") {
  Written h;
  h.table.lookback = CursorSpan{CursorSpan::Kind::Duration, 3 * 86400};
  // The 27th changed in the source (a cancelled order completed), and the
  // 22nd too, which the lookback does not reach.
  h.target.differing[at(kMarch27)] = PartitionComparison{31, 30, false};
  h.target.differing[at("2026-03-21T23:00:00Z")] = PartitionComparison{5, 5, false};
  const std::size_t rows = h.state.runs.size();
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::Success);
  // The newest complete day (the 29th) and the three before it.
  CHECK(h.compared() == std::string(kMarch26) + " " + kMarch27 + " " + kMarch28 + " " + kMarch29);
  CHECK(h.written() == kMarch27);
  CHECK(s.chunks == 1);
  CHECK(s.rewrite_reason == "2026-03-27 lookback: the query returns 31 rows, the target holds 30");
  REQUIRE(h.state.runs.size() == rows + 1);
  const FakeRunRow& rewrite = h.state.runs.back();
  CHECK(rewrite.start.window->lo.raw == micros_at(kMarch27));
  CHECK(rewrite.end->success);
  CHECK(rewrite.end->rewrite_reason == "lookback: the query returns 31 rows, the target holds 30");
}

TEST_CASE("lookback: an unchanged lookback writes nothing: no partition, no run row, no commit") {
  Written h;
  h.table.lookback = CursorSpan{CursorSpan::Kind::Duration, 3 * 86400};
  const std::size_t rows = h.state.runs.size();
  const int commits = h.target.commits;
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::Success);
  CHECK(h.target.compared.size() == 4);
  CHECK(s.chunks == 0);
  CHECK(h.state.runs.size() == rows);
  CHECK(h.target.commits == commits);
  CHECK(h.target.begun.size() == 10);  // the first firing's, no unit of work since
}

TEST_CASE("lookback: a partition written by this firing is not checked again by it") {
  PartitionRunHarness h;
  h.table.initial = "2026-03-27";
  h.table.lookback = CursorSpan{CursorSpan::Kind::Duration, 2 * 86400};
  h.source.now = at("2026-03-30T10:00:00Z");
  REQUIRE(h.run().chunks == 3);
  CHECK(h.target.compared.empty());
}

TEST_CASE("lookback: a check that fails fails the firing, and what was written stays") {
  Written h;
  h.table.lookback = CursorSpan{CursorSpan::Kind::Duration, 86400};
  h.source.now = at("2026-03-31T10:00:00Z");  // the 30th is due
  h.target.fail_compare = "source: canceling statement due to statement timeout";
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::Failed);
  CHECK(s.error == "source: canceling statement due to statement timeout");
  CHECK(h.written() == kMarch30);
}

TEST_CASE("a partition an input flagged is checked at the next firing, past the lookback, once its inputs passed it") {
  Written h;
  h.table.inputs = {TableRef{"shop", "orders", TableMode::Incremental, date::locate_zone("UTC")}};
  h.state.inputs = {InputState{StoredWatermark{CursorValue{CursorType::TimestampTz, micros_at("2026-03-30T09:00:00Z")}},
                               std::nullopt}};
  h.state.flags[at("2026-03-21T23:00:00Z")] = "input shop.orders rewound to 2026-03-22T00:00:00Z";
  h.state.flags[at(kMarch26)] = "input shop.orders rewound to 2026-03-22T00:00:00Z";
  h.target.differing[at(kMarch26)] = PartitionComparison{4, 5, false};
  RunSummary s = h.run();
  CHECK(s.status == RunStatus::Success);
  CHECK(h.compared() == std::string("2026-03-21T23:00:00Z ") + kMarch26);
  CHECK(h.written() == kMarch26);
  CHECK(s.rewrite_reason ==
        "2026-03-26 input shop.orders rewound to 2026-03-22T00:00:00Z: the query returns 4 rows, the target holds 5");
  // The equal one's flag was cleared by the check, the other's by its rewrite.
  CHECK(h.state.flags.empty());
  CHECK(h.state.flags_cleared == 1);

  // A flag on a partition the input has not passed again waits for it.
  h.state.flags[at(kMarch29)] = "input shop.orders rewound to 2026-03-29T12:00:00Z";
  h.state.inputs[0].watermark->value.raw = micros_at("2026-03-29T12:00:00Z");
  h.target.compared.clear();
  s = h.run();
  CHECK(h.target.compared.empty());
  CHECK(h.state.flags.size() == 1);
  h.state.inputs[0].watermark->value.raw = micros_at("2026-03-30T09:00:00Z");
  s = h.run();
  CHECK(h.compared() == kMarch29);
  CHECK(h.state.flags.empty());
}

TEST_CASE("inputs: a partition is complete only once every input has passed its end, and the hold is recorded") {
  PartitionRunHarness h;
  h.table.initial = "2026-03-28";
  h.table.inputs = {TableRef{"shop", "orders", TableMode::Incremental, date::locate_zone("UTC")},
                    TableRef{"shop", "daily", TableMode::Partition, date::locate_zone("UTC")}};
  h.source.now = at("2026-03-30T10:00:00Z");
  // orders has loaded the 29th but for its last minutes; daily all of it.
  h.state.inputs = {InputState{StoredWatermark{CursorValue{CursorType::TimestampTz, micros_at("2026-03-29T21:58:10Z")}},
                               std::nullopt},
                    InputState{std::nullopt, at(kMarch30)}};
  RunSummary s = h.run();
  CHECK(s.status == RunStatus::Success);
  CHECK(h.written() == kMarch28);  // the 28th only
  CHECK(s.horizon.held_by == "waiting for shop.orders, at 2026-03-29T21:58:10Z");
  // The 29th ended at 22:00 UTC; the source alone would have written it
  // since (its horizon: 10:00).
  REQUIRE(s.horizon.input_wait_seconds);
  CHECK(*s.horizon.input_wait_seconds == 12 * 3600);
  REQUIRE_FALSE(h.observer.horizons.empty());
  CHECK(h.observer.horizons.back().input_wait_seconds == s.horizon.input_wait_seconds);
  // The firing's hold is a run row of its own, after the partition's.
  const FakeRunRow& held = h.state.runs.back();
  CHECK_FALSE(held.start.window);
  REQUIRE(held.end);
  CHECK(held.end->success);
  CHECK(held.end->rows_written == 0);
  CHECK(held.end->horizon.held_by == "waiting for shop.orders, at 2026-03-29T21:58:10Z");

  // orders loads the rest: the 29th is written at the next firing.
  h.state.inputs[0].watermark->value.raw = micros_at("2026-03-30T09:00:00Z");
  const std::size_t rows = h.state.runs.size();
  s = h.run();
  CHECK(h.written() == std::string(kMarch28) + " " + kMarch29);
  CHECK_FALSE(s.horizon.input_wait_seconds);
  CHECK(s.horizon.held_by.empty());
  CHECK(h.state.runs.size() == rows + 1);  // the 29th's; nothing held
  CHECK(h.observer.horizons.back().input_wait_seconds == std::nullopt);
}

TEST_CASE("inputs: a firing that waits for nothing complete records nothing, though an input is behind the clock") {
  Written h;
  h.table.inputs = {TableRef{"shop", "orders", TableMode::Incremental, date::locate_zone("UTC")}};
  // Today's partition is the only one the input holds back, as the calendar does.
  h.state.inputs = {InputState{StoredWatermark{CursorValue{CursorType::TimestampTz, micros_at("2026-03-30T09:55:00Z")}},
                               std::nullopt}};
  const std::size_t rows = h.state.runs.size();
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::Success);
  CHECK(h.state.runs.size() == rows);
  CHECK(s.horizon.held_by.empty());
  CHECK_FALSE(s.horizon.input_wait_seconds);
}

TEST_CASE("inputs: an input that has loaded nothing holds every partition; one with an integer cursor fails") {
  PartitionRunHarness h;
  h.table.initial = "2026-03-28";
  h.table.inputs = {TableRef{"shop", "orders", TableMode::Incremental, date::locate_zone("UTC")}};
  h.source.now = at("2026-03-30T10:00:00Z");
  RunSummary s = h.run();
  CHECK(s.status == RunStatus::Success);
  CHECK(h.target.partitions_written.empty());
  CHECK(s.horizon.held_by == "waiting for shop.orders, which has loaded nothing yet");
  CHECK(h.state.runs.size() == 1);

  h.state.inputs = {InputState{StoredWatermark{CursorValue{CursorType::Integer, 1000}}, std::nullopt}};
  s = h.run();
  CHECK(s.status == RunStatus::Failed);
  CHECK(s.error_kind == ErrorKind::Permanent);
  CHECK(s.error.find("input shop.orders has an integer cursor") == 0);
}

TEST_CASE("a partition written again flags its dependents' done partitions after it, with the write") {
  Written h;
  h.table.lookback = CursorSpan{CursorSpan::Kind::Duration, 86400};
  h.table.dependents = {TableRef{"marts", "weekly", TableMode::Partition, nullptr},
                        TableRef{"marts", "order_lines", TableMode::Incremental, nullptr}};
  h.target.differing[at(kMarch28)] = PartitionComparison{3, 2, false};
  const RunSummary s = run_table(h.context(), RunTrigger::Schedule);
  CHECK(s.chunks == 1);
  REQUIRE(h.state.downstream.size() == 1);
  CHECK(h.state.downstream[0].tables == std::vector<TableKey>{TableKey{"marts", "weekly"}});
  CHECK(h.state.downstream[0].from == at(kMarch28));
  CHECK(h.state.downstream[0].because == "input p.daily rewrote partition 2026-03-28");
  // And the firing told the fleet: its dependents run soon.
  CHECK(h.state.announced == std::vector<TableKey>{TableKey{"p", "daily"}});
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("regression: a flag set while a firing read its inputs was cleared by a check that could not see it") {
  // The firing reads the flags first, then its inputs: a flag set in
  // between (a rewind) is counted with the inputs and waits for the next
  // firing, whose read of the inputs sees the rewind.
  Written h;
  h.table.inputs = {TableRef{"shop", "orders", TableMode::Incremental, date::locate_zone("UTC")}};
  h.state.inputs = {InputState{StoredWatermark{CursorValue{CursorType::TimestampTz, micros_at("2026-03-30T09:00:00Z")}},
                               std::nullopt}};
  h.state.after_inputs_read = [&] {
    h.state.flags[at(kMarch28)] = "input shop.orders rewound to 2026-03-22T00:00:00Z";
    h.state.after_inputs_read = nullptr;
  };
  h.run();
  CHECK(h.target.compared.empty());
  CHECK(h.state.flags.size() == 1);
  // The next firing checks it.
  h.run();
  CHECK(h.compared() == kMarch28);
  CHECK(h.state.flags.empty());
}

TEST_CASE("regression: a partition written while its input changed below it was marked done and never checked") {
  PartitionRunHarness h;
  h.table.initial = "2026-03-28";
  h.table.inputs = {TableRef{"shop", "orders", TableMode::Incremental, date::locate_zone("UTC")}};
  h.source.now = at("2026-03-30T10:00:00Z");
  h.state.inputs = {InputState{StoredWatermark{CursorValue{CursorType::TimestampTz, micros_at("2026-03-30T09:00:00Z")}},
                               std::nullopt}};
  h.state.input_changes = 4;
  // An input is rewound (its change counted) after the firing read it,
  // before its partitions are recorded: they are flagged as they are done.
  h.state.after_inputs_read = [&] { h.state.input_changes = 5; };
  REQUIRE(h.run().chunks == 2);
  CHECK(h.state.flags.size() == 2);
  CHECK(h.state.flags.begin()->second == "an input changed while it was written");
  // The next firing, its count read afresh, checks them and clears them.
  h.state.after_inputs_read = nullptr;
  h.run();
  CHECK(h.target.compared.size() == 2);
  CHECK(h.state.flags.empty());
}

TEST_CASE("a firing an input woke checks what is flagged, not its lookback: that is the schedule's") {
  Written h;
  h.table.lookback = CursorSpan{CursorSpan::Kind::Duration, 3 * 86400};
  h.table.inputs = {TableRef{"shop", "orders", TableMode::Incremental, date::locate_zone("UTC")}};
  h.state.inputs = {InputState{StoredWatermark{CursorValue{CursorType::TimestampTz, micros_at("2026-03-30T09:00:00Z")}},
                               std::nullopt}};
  h.state.flags[at("2026-03-21T23:00:00Z")] = "input shop.orders repaired by reconcile";
  PartitionRun(h.context()).execute(RunTrigger::Input);
  CHECK(h.compared() == "2026-03-21T23:00:00Z");
  h.target.compared.clear();
  h.run();  // the schedule's
  CHECK(h.target.compared.size() == 4);
}

}  // namespace tidemark
