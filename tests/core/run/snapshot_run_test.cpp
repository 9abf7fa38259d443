// A snapshot table's run against in-memory ports: the target becomes the
// source (new, changed and gone rows), the watermark becomes the source's
// clock, and the frame (lock, run row, compare-and-set, drift) is the one
// every run has. tests/integration/snapshot_test.cpp runs it on PostgreSQL.
#include <doctest/doctest.h>

#include "core/run/incremental_run.h"
#include "core/run/snapshot_run.h"
#include "fake_ports.h"
#include "snapshot_harness.h"

namespace tidemark {
namespace {

using namespace std::chrono_literals;

}  // namespace

TEST_CASE("snapshot: a first run copies the table and sets the watermark to the source's clock") {
  SnapshotHarness h;
  h.source.rows = {{1, 10}, {2, 20}};
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::Success);
  CHECK(s.rows_read == 2);
  CHECK(s.rows_written == 2);
  CHECK(s.rows_deleted == 0);
  CHECK(h.target_matches_source());
  CHECK(h.state.watermark == h.clock());
  CHECK(s.watermark_after == h.clock());
  REQUIRE(h.state.runs.size() == 1);
  CHECK(h.state.runs[0].end->success);
  CHECK_FALSE(h.state.runs[0].end->window);  // a snapshot reads no cursor window
  CHECK_FALSE(h.state.locked);
}

TEST_CASE("snapshot: where a snapshot left each side is stored with it and is the next snapshot's hint") {
  SnapshotHarness h;
  h.source.rows = {{1, 10}};
  REQUIRE(h.run().status == RunStatus::Success);
  REQUIRE(h.state.snapshot_horizon);
  CHECK(h.state.snapshot_horizon->source == 100);
  CHECK(h.state.snapshot_horizon->target == 101);
  h.source.rows = {{1, 11}};
  REQUIRE(h.run().status == RunStatus::Success);
  REQUIRE(h.target.snapshot_hints.size() == 2);
  CHECK_FALSE(h.target.snapshot_hints[0]);
  REQUIRE(h.target.snapshot_hints[1]);
  CHECK(h.target.snapshot_hints[1]->source == 100);
  CHECK(h.state.snapshot_horizon->source == 110);
  SUBCASE("a snapshot that fails stores nothing: the next one has the hint of the last that committed") {
    h.target.fail_at_chunk = 2;
    CHECK(h.run().status == RunStatus::Failed);
    CHECK(h.state.snapshot_horizon->source == 110);
    h.target.fail_at_chunk = -1;
    REQUIRE(h.run().status == RunStatus::Success);
    REQUIRE(h.target.snapshot_hints.size() == 4);
    CHECK(h.target.snapshot_hints[3]->source == 110);
  }
}

TEST_CASE("snapshot: new, changed and gone rows are written; unchanged ones are not") {
  SnapshotHarness h;
  h.source.rows = {{1, 10}, {2, 20}, {3, 30}};
  REQUIRE(h.run().status == RunStatus::Success);
  h.source.rows = {{1, 10}, {2, 21}, {4, 40}};  // 2 changed, 3 gone, 4 new
  h.source.now += 60s;
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::Success);
  CHECK(s.rows_read == 3);
  CHECK(s.rows_written == 3);  // 2, 4 and the deletion of 3
  CHECK(s.rows_deleted == 1);
  CHECK(h.target_matches_source());
  CHECK(h.state.watermark == h.clock());
}

TEST_CASE("snapshot: an unchanged table writes nothing and still moves the watermark to the new snapshot") {
  SnapshotHarness h;
  h.source.rows = {{1, 10}, {2, 20}};
  REQUIRE(h.run().status == RunStatus::Success);
  h.source.now += 60s;
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::Success);
  CHECK(s.rows_written == 0);
  CHECK(h.state.watermark == h.clock());
}

TEST_CASE("snapshot: a source emptied empties the target") {
  SnapshotHarness h;
  h.source.rows = {{1, 10}};
  REQUIRE(h.run().status == RunStatus::Success);
  h.source.rows.clear();
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::Success);
  CHECK(s.rows_deleted == 1);
  CHECK(h.target.rows.empty());
}

TEST_CASE("snapshot: a failed write leaves target and watermark as they were") {
  SnapshotHarness h;
  h.source.rows = {{1, 10}};
  REQUIRE(h.run().status == RunStatus::Success);
  const auto watermark = h.state.watermark;
  const auto rows = h.target.rows;
  h.source.rows.push_back({2, 20});
  h.source.now += 60s;
  h.target.fail_at_chunk = 1;
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::Failed);
  CHECK(s.error == "injected failure");
  CHECK(h.state.watermark == watermark);
  CHECK(h.target.rows == rows);
  CHECK_FALSE(h.state.runs.back().end->success);
}

TEST_CASE("snapshot: a watermark moved by another writer fails the run and commits nothing") {
  SnapshotHarness h;
  h.source.rows = {{1, 10}};
  REQUIRE(h.run().status == RunStatus::Success);
  const CursorValue other{CursorType::TimestampTz, 5};
  h.target.before_record = [&] { h.state.watermark = other; };
  h.source.rows.push_back({2, 20});
  const auto rows = h.target.rows;
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::Failed);
  CHECK(s.error.find("another writer") != std::string::npos);
  CHECK(h.state.watermark == other);
  CHECK(h.target.rows == rows);
}

TEST_CASE("snapshot: a run skips when another holds the lock") {
  SnapshotHarness h;
  h.state.held_elsewhere = true;
  CHECK(h.run().status == RunStatus::SkippedLocked);
  CHECK(h.target.chunks.empty());
  CHECK(h.state.runs.empty());
}

TEST_CASE("snapshot: a cursor's watermark, from the table's earlier mode, fails the run permanently") {
  for (const CursorValue& earlier : {CursorValue{CursorType::Integer, 42}, CursorValue{CursorType::TimestampTz, 5}}) {
    SnapshotHarness h;
    h.source.rows = {{1, 10}};
    h.state.watermark = earlier;
    const RunSummary s = h.run();
    CHECK(s.status == RunStatus::Failed);
    CHECK(s.error_kind == ErrorKind::Permanent);
    CHECK(s.error.find("is a cursor's, kept from an earlier mode of this table") != std::string::npos);
    CHECK(h.target.chunks.empty());
  }
}

TEST_CASE("regression: a table switched from snapshot to incremental does not resume from the snapshot's time") {
  // A row stamped before the snapshot but committed after it was neither
  // in the snapshot nor, resuming from its time, ever in a window.
  SnapshotHarness h;
  h.source.rows = {{1, 10}};
  REQUIRE(h.run().status == RunStatus::Success);
  CHECK(h.state.watermark_snapshot);
  h.table.mode = TableMode::Incremental;
  h.table.cursor = "c";
  h.source.type = CursorType::TimestampTz;
  const RunSummary s = IncrementalRun(h.context()).execute(RunTrigger::Manual);
  CHECK(s.status == RunStatus::Failed);
  CHECK(s.error_kind == ErrorKind::Permanent);
  CHECK(s.error.find("is the time of a snapshot") != std::string::npos);
  CHECK(h.target.chunks.size() == 1);  // the snapshot's only
}

TEST_CASE("snapshot: a column added in the source fails the run before it writes, unless append_new_columns") {
  SnapshotHarness h;
  h.source.rows = {{1, 10}};
  REQUIRE(h.run().status == RunStatus::Success);
  h.source.catalog.push_back({"note", "text"});
  h.target.columns = std::vector<ColumnShape>{{"id", "bigint"}, {"c", "bigint"}};
  const auto commits = h.target.commits;
  RunSummary s = h.run();
  CHECK(s.status == RunStatus::Failed);
  CHECK(s.error == "schema drift in src: added column note text");
  CHECK(h.target.commits == commits);

  h.table.on_schema_change = SchemaChangePolicy::AppendNewColumns;
  s = h.run();
  CHECK(s.status == RunStatus::Success);
  CHECK(s.appended_columns == std::vector<std::string>{"note"});
  CHECK(h.target.added_columns == std::vector<ColumnShape>{{"note", "text"}});
  CHECK(h.state.loaded_columns == h.source.catalog);
}

}  // namespace tidemark
