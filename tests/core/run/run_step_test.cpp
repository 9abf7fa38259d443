// The commit rule of a run's step (core/run_step.h) against the fakes,
// which implement the unit-of-work port and nothing more: the rule that a
// step commits only while its lock is held and its compare-and-set holds
// is checked here, in core's code, not in a fake.
#include <doctest/doctest.h>

#include "core/time/instant_text.h"
#include "core/run/run_step.h"
#include "fake_ports.h"

namespace tidemark {
namespace {

CursorValue n(std::int64_t v) { return {CursorType::Integer, v}; }

struct Harness : FakeRunPorts {
  SourceTable source_table = integer_source();

  static SourceTable integer_source() {
    SourceTable s;
    s.cursor_type = CursorType::Integer;
    s.columns = {"id", "c"};
    return s;
  }
  int records = 0;

  Harness() {
    table.name = "t";
    source.rows = {{1, 10}, {2, 20}};
    state.locked = true;  // the run holds the table's lock
    target.before_record = [this] { ++records; };
  }
  StepRecord chunk(std::optional<CursorValue> expected, CursorValue next) {
    StepRecord r;
    r.lock = RunLock{TableKey{"p", "t"}, std::nullopt};
    r.run = 1;
    r.window = Window{n(0), n(30)};
    r.move = WatermarkMove{expected, next};
    return r;
  }
};

}  // namespace

TEST_CASE("a step commits its rows and moves the watermark together") {
  Harness h;
  const auto counts = commit_chunk(h.target, h.table, h.source_table, h.chunk(std::nullopt, n(30)));
  REQUIRE(counts.ok());
  CHECK(counts->rows_read == 2);
  CHECK(h.target.rows.size() == 2);
  CHECK(h.state.watermark == n(30));
  CHECK(h.target.commits == 1);
}

TEST_CASE("a step whose lock was lost commits nothing, rows included") {
  Harness h;
  h.target.before_record = [&] { h.state.locked = false; };  // the session holding it died
  const auto counts = commit_chunk(h.target, h.table, h.source_table, h.chunk(std::nullopt, n(30)));
  REQUIRE_FALSE(counts.ok());
  CHECK(counts.error().find("p.t is no longer held by this run; nothing committed") != std::string::npos);
  CHECK(counts.error_kind() == ErrorKind::Transient);
  CHECK(h.target.rows.empty());
  CHECK_FALSE(h.state.watermark);
  CHECK(h.target.commits == 0);
}

TEST_CASE("a step whose watermark another writer moved commits nothing and names both values") {
  Harness h;
  h.state.watermark = n(5);
  h.target.before_record = [&] { h.state.watermark = n(99); };
  const auto counts = commit_chunk(h.target, h.table, h.source_table, h.chunk(n(5), n(30)));
  REQUIRE_FALSE(counts.ok());
  CHECK(counts.error() == "the watermark of p.t is no longer 5 but 99: another writer moved it; nothing committed");
  CHECK(h.state.watermark == n(99));
  CHECK(h.target.rows.empty());
}

TEST_CASE("a first step expects no watermark: one that appeared meanwhile fails it") {
  Harness h;
  h.target.before_record = [&] { h.state.watermark = n(7); };
  const auto counts = commit_chunk(h.target, h.table, h.source_table, h.chunk(std::nullopt, n(30)));
  REQUIRE_FALSE(counts.ok());
  CHECK(counts.error().find("no longer (none) but 7") != std::string::npos);
}

TEST_CASE("a commit that fails lands nothing and fails the step") {
  Harness h;
  h.target.fail_commit = "state: COMMIT: server closed the connection unexpectedly";
  const auto counts = commit_chunk(h.target, h.table, h.source_table, h.chunk(std::nullopt, n(30)));
  REQUIRE_FALSE(counts.ok());
  CHECK(counts.error() == "state: COMMIT: server closed the connection unexpectedly");
  CHECK(h.target.rows.empty());
  CHECK_FALSE(h.state.watermark);
}

TEST_CASE("a unit of work is begun under the step's lock, and never committed unrecorded") {
  Harness h;
  h.state.watermark = n(5);
  h.target.before_record = [&] { h.state.watermark = n(6); };
  CHECK_FALSE(commit_chunk(h.target, h.table, h.source_table, h.chunk(n(5), n(30))).ok());
  h.state.locked = false;
  CHECK_FALSE(commit_chunk(h.target, h.table, h.source_table, h.chunk(n(6), n(30))).ok());
  CHECK(h.target.unrecorded_commits == 0);
  REQUIRE(h.target.begun.size() == 2);
  CHECK(h.target.begun[0].table.display() == "p.t");
  CHECK_FALSE(h.target.begun[0].partition);
}

TEST_CASE("a failed write is never recorded nor committed") {
  Harness h;
  h.target.fail_at_chunk = 0;
  const auto counts = commit_chunk(h.target, h.table, h.source_table, h.chunk(std::nullopt, n(30)));
  REQUIRE_FALSE(counts.ok());
  CHECK(h.records == 0);
  CHECK(h.target.commits == 0);
  CHECK(h.target.rows.empty());
}

TEST_CASE("a step without a move (a backfill's) writes rows and leaves the watermark") {
  Harness h;
  h.state.watermark = n(15);
  StepRecord r = h.chunk(std::nullopt, n(0));
  r.move.reset();
  h.target.before_record = [&] { h.state.watermark = n(16); };  // no compare-and-set to fail
  const auto counts = commit_chunk(h.target, h.table, h.source_table, r);
  REQUIRE(counts.ok());
  CHECK(h.target.rows.size() == 2);
  CHECK(h.state.watermark == n(16));
}

TEST_CASE("a record alone moves the watermark, under the same rule") {
  Harness h;
  StepRecord r = h.chunk(std::nullopt, n(40));
  r.window.reset();
  CHECK(commit_record(h.target, r).ok());
  CHECK(h.state.watermark == n(40));
  r.move = WatermarkMove{n(39), n(50)};
  const Status stale = commit_record(h.target, r);
  REQUIRE_FALSE(stale.ok());
  CHECK(stale.error().find("no longer 39 but 40") != std::string::npos);
  CHECK(h.state.watermark == n(40));
}

TEST_CASE("a partition step checks the partition's own lock and marks it done only on commit") {
  Harness h;
  const TimeWindow day{*parse_instant("2026-03-01T00:00:00Z"), *parse_instant("2026-03-02T00:00:00Z")};
  StepRecord r;
  r.lock = RunLock{TableKey{"p", "t"}, day};
  r.run = 1;
  r.partition_done = true;
  const PartitionRequest request{TableKey{"p", "t"}, 1, day, "", "", "", "", false};

  const auto without_lock = commit_partition(h.target, h.table, request, r);
  REQUIRE_FALSE(without_lock.ok());  // the table's lock is not the partition's
  CHECK(without_lock.error().find("p.t partition 2026-03-01T00:00:00Z is no longer held") != std::string::npos);
  // Regression: a Berlin day was named by its UTC start, the day before.
  r.lock_label = "2026-03-01";
  CHECK(commit_partition(h.target, h.table, request, r).error().find("p.t partition 2026-03-01 is no longer held") !=
        std::string::npos);
  CHECK(h.state.partitions.empty());

  REQUIRE(h.state.lock(r.lock, false).value());
  REQUIRE(commit_partition(h.target, h.table, request, r).ok());
  CHECK(h.state.partitions.at(day.lo).second == "done");
}

}  // namespace tidemark
