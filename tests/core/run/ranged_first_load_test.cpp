// A snapshot table's first load in page ranges against in-memory ports:
// each range commits by itself, the last one moving the watermark; a load
// that stopped part way loads only the ranges left, upserted, then diffs
// the whole table before the watermark moves; a table below `above`, a
// table without a key, and a role that may not LOCK load in one stream.
// tests/integration/ranged_load_test.cpp runs it on PostgreSQL.
#include <doctest/doctest.h>

#include "snapshot_harness.h"

namespace tidemark {
namespace {

struct RangedHarness : SnapshotHarness {
  RangedHarness() {
    table.ranges = LoadRanges{100, 10};  // 10 bytes a range
    // Eight rows on four pages, 100 bytes a page: four ranges.
    for (std::int64_t k = 1; k <= 8; ++k) source.rows.push_back({k, k * 10, (k - 1) / 2});
    source.extent = TableExtent{4, 400};
  }
  std::vector<bool> straights() const {
    std::vector<bool> out;
    for (const auto& [pages, straight] : target.ranges_written) out.push_back(straight);
    return out;
  }
};

// A crew that runs its jobs through the run's own target, last first:
// the order the run must not depend on. Fails its `fail_at`th job.
struct BackwardsCrew : RangeCrew {
  struct Asked {
    std::size_t count;
    int helpers;
  };
  std::vector<Asked> asked;
  int fail_at = -1;
  Status run(const TableConfig&, Target& own, std::size_t count, int helpers, const Job& job,
             const Done& done) override {
    asked.push_back(Asked{count, helpers});
    for (std::size_t i = count; i-- > 0;) {
      if (static_cast<int>(count - 1 - i) == fail_at) return Error{"a helper's range failed"};
      const auto counts = job(own, i);
      if (!counts) return counts.failure();
      done(i, *counts);
    }
    return ok_status();
  }
};

}  // namespace

TEST_CASE("ranged first load with helpers: the first range alone, those between to the crew, the last after them") {
  RangedHarness h;
  BackwardsCrew crew;
  h.crew = &crew;
  h.table.ranges.workers = 3;
  const RunSummary s = h.run();
  REQUIRE(s.status == RunStatus::Success);
  CHECK(h.target_matches_source());
  REQUIRE(crew.asked.size() == 1);
  CHECK(crew.asked[0].count == 2);    // ranges 1 and 2
  CHECK(crew.asked[0].helpers == 2);  // the run's own sessions are the third worker
  REQUIRE(h.target.ranges_written.size() == 4);
  CHECK(h.target.ranges_written[0].first == PageRange{0, 1});  // makes or changes the target first
  CHECK(h.target.ranges_written[1].first == PageRange{2, 3});  // the crew's order
  CHECK(h.target.ranges_written[2].first == PageRange{1, 2});
  CHECK(h.target.ranges_written[3].first == PageRange{3, std::nullopt});  // finishes, after every other
  CHECK(h.straights() == std::vector<bool>{true, true, true, true});
  REQUIRE(h.target.records.size() == 4);
  CHECK(h.target.records[0].loaded_columns);
  CHECK(h.target.records[1].range_done == 2);
  CHECK(h.target.records[2].range_done == 1);
  for (int i = 0; i < 3; ++i) CHECK_FALSE(h.target.records[static_cast<std::size_t>(i)].move);
  CHECK(h.target.records[3].ranges_finished);
  CHECK(h.state.watermark == h.clock());
  // Counted as they commit, whichever range it was.
  CHECK(h.observer.ranges == std::vector<std::pair<int, int>>{{1, 4}, {2, 4}, {3, 4}, {4, 4}});
  CHECK(s.chunks == 4);
  CHECK(s.rows_read == 8);
  CHECK(s.rows_written == 8);
}

TEST_CASE("ranged first load with helpers: a range of the crew's that fails moves nothing, and the restart resumes") {
  RangedHarness h;
  BackwardsCrew crew;
  crew.fail_at = 0;
  h.crew = &crew;
  h.table.ranges.workers = 2;
  const RunSummary failed = h.run();
  CHECK(failed.status == RunStatus::Failed);
  CHECK(failed.error == "a helper's range failed");
  CHECK_FALSE(h.state.watermark);
  REQUIRE(h.state.ranges.size() == 4);
  CHECK(h.state.ranges[0].done);
  for (std::size_t i = 1; i < 4; ++i) CHECK_FALSE(h.state.ranges[i].done);
  CHECK_FALSE(h.source.snapshot_open);
  CHECK(h.target.helpers_awaited == 0);  // no earlier load to wait for

  // The restart waits for any helper of the run before, then hands the
  // ranges left but the first to the crew: none of them finishes a
  // resume, the diff does.
  crew.fail_at = -1;
  h.target.ranges_written.clear();
  const RunSummary s = h.run();
  REQUIRE(s.status == RunStatus::Success);
  CHECK(h.target.helpers_awaited == 1);
  REQUIRE(crew.asked.size() == 2);
  CHECK(crew.asked[1].count == 2);
  CHECK(crew.asked[1].helpers == 1);
  REQUIRE(h.target.ranges_written.size() == 3);
  CHECK(h.target.ranges_written[0].first == PageRange{1, 2});
  CHECK(h.target.ranges_written[1].first == PageRange{3, std::nullopt});
  CHECK(h.target.ranges_written[2].first == PageRange{2, 3});
  CHECK(h.straights() == std::vector<bool>{false, false, false});
  CHECK(h.target_matches_source());
  CHECK(h.state.ranges.empty());
  CHECK(h.observer.ranges == std::vector<std::pair<int, int>>{{1, 4}, {2, 4}, {3, 4}, {4, 4}});
}

TEST_CASE("ranged first load with helpers: one worker, or too few ranges between, asks no crew") {
  for (const int workers : {1, 2}) {
    CAPTURE(workers);
    RangedHarness h;
    BackwardsCrew crew;
    h.crew = &crew;
    h.table.ranges.workers = workers;
    if (workers == 2) h.source.extent = TableExtent{3, 300};  // three ranges: one between
    REQUIRE(h.run().status == RunStatus::Success);
    CHECK(crew.asked.empty());
    CHECK(h.target_matches_source());
  }
}

TEST_CASE("ranged first load: each range commits by itself, straight in, and the last moves the watermark") {
  RangedHarness h;
  const RunSummary s = h.run();
  REQUIRE(s.status == RunStatus::Success);
  CHECK(h.target_matches_source());
  CHECK(h.state.watermark == h.clock());
  CHECK(h.state.watermark_snapshot);
  CHECK(s.rows_read == 8);
  CHECK(s.rows_written == 8);
  CHECK(s.chunks == 4);
  CHECK(s.snapshot_path == "first load in 4 ranges");
  REQUIRE(h.target.ranges_written.size() == 4);
  CHECK(h.target.ranges_written[0].first == PageRange{0, 1});
  CHECK(h.target.ranges_written[3].first == PageRange{3, std::nullopt});  // open-ended: rows on pages added since
  CHECK(h.straights() == std::vector<bool>{true, true, true, true});
  CHECK(h.target.commits == 4);
  // Only the last commit moves the watermark, stores the horizon and
  // forgets the ranges; the first stores the loaded columns.
  REQUIRE(h.target.records.size() == 4);
  CHECK(h.target.records[0].loaded_columns);
  CHECK_FALSE(h.target.records[1].loaded_columns);
  for (int i = 0; i < 3; ++i) {
    CHECK_FALSE(h.target.records[static_cast<std::size_t>(i)].move);
    CHECK(h.target.records[static_cast<std::size_t>(i)].range_done == i);
  }
  CHECK(h.target.records[3].ranges_finished);
  CHECK(h.observer.ranges == std::vector<std::pair<int, int>>{{1, 4}, {2, 4}, {3, 4}, {4, 4}});
  REQUIRE(h.state.snapshot_horizon);
  CHECK(h.state.snapshot_horizon->source == 500);  // the held snapshot's
  CHECK(h.state.ranges.empty());
  CHECK(h.source.snapshots_opened == 1);
  CHECK_FALSE(h.source.snapshot_open);
  CHECK(h.target.snapshot_hints.empty());  // no diff: one snapshot, read whole
}

TEST_CASE("ranged first load: a failure part way keeps the ranges done and moves nothing") {
  RangedHarness h;
  h.target.fail_at_chunk = 2;
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::Failed);
  CHECK_FALSE(h.state.watermark);
  REQUIRE(h.state.ranges.size() == 4);
  CHECK(h.state.ranges[0].done);
  CHECK(h.state.ranges[1].done);
  CHECK_FALSE(h.state.ranges[2].done);
  CHECK_FALSE(h.state.ranges[3].done);
  CHECK(h.target.rows.size() == 4);  // the rows of pages 0 and 1
  CHECK_FALSE(h.source.snapshot_open);
}

TEST_CASE("ranged first load: a restart loads only the ranges left, upserted, then diffs before the watermark moves") {
  RangedHarness h;
  h.target.fail_at_chunk = 2;
  REQUIRE(h.run().status == RunStatus::Failed);
  // Between the two runs a row changes, a row is deleted, and a row moves
  // to another page (an update's new tuple): the ranges left see the new
  // snapshot, the diff what lies in the ranges done.
  h.source.rows[0].cursor = 11;                        // page 0, done: only the diff sees it
  h.source.rows.erase(h.source.rows.begin() + 1);      // key 2, page 0, done: gone
  h.source.rows[2].page = 3;                           // key 4 moves from page 1 (done) to page 3 (left)
  h.target.fail_at_chunk = -1;
  h.target.ranges_written.clear();
  const std::size_t chunks_before = h.target.chunks.size();

  const RunSummary s = h.run();
  REQUIRE(s.status == RunStatus::Success);
  CHECK(h.target_matches_source());
  CHECK(h.state.watermark == h.clock());
  REQUIRE(h.target.ranges_written.size() == 2);
  CHECK(h.target.ranges_written[0].first == PageRange{2, 3});
  CHECK(h.target.ranges_written[1].first == PageRange{3, std::nullopt});
  CHECK(h.straights() == std::vector<bool>{false, false});  // key 4 is in the target already
  CHECK(h.target.chunks.size() == chunks_before + 3);        // two ranges, then the diff
  REQUIRE(h.target.snapshot_hints.size() == 1);
  CHECK_FALSE(h.target.snapshot_hints[0]);  // the diff takes no hint: the ranges came from two snapshots
  CHECK(h.target.records.back().ranges_finished);
  CHECK(h.state.ranges.empty());
  CHECK(s.snapshot_path.rfind("first load resumed, 2 of 4 ranges loaded again, then ", 0) == 0);
  // A resumed load counts the ranges its earlier run committed.
  CHECK(h.observer.ranges == std::vector<std::pair<int, int>>{{1, 4}, {2, 4}, {3, 4}, {4, 4}});
  CHECK_FALSE(h.source.snapshot_open);
}

TEST_CASE("ranged first load: a target emptied since the ranges were planned, now too small for ranges, loads "
          "whole and forgets them") {
  RangedHarness h;
  h.target.fail_at_chunk = 1;
  REQUIRE(h.run().status == RunStatus::Failed);
  h.target.rows.clear();
  h.target.fail_at_chunk = -1;
  h.table.ranges.above = 1000;
  const RunSummary s = h.run();
  REQUIRE(s.status == RunStatus::Success);
  CHECK(s.snapshot_path == "whole");
  CHECK(h.state.ranges.empty());
  CHECK(h.target_matches_source());
}

TEST_CASE("ranged first load: a target emptied since the ranges were planned starts afresh") {
  RangedHarness h;
  h.target.fail_at_chunk = 1;
  REQUIRE(h.run().status == RunStatus::Failed);
  h.target.rows.clear();
  h.target.fail_at_chunk = -1;
  h.target.ranges_written.clear();
  REQUIRE(h.run().status == RunStatus::Success);
  CHECK(h.straights() == std::vector<bool>{true, true, true, true});
  CHECK(h.state.ranges_planned == 2);
  CHECK(h.target_matches_source());
}

TEST_CASE("ranged first load: what loads in one stream instead") {
  struct Case {
    const char* name;
    std::function<void(RangedHarness&)> arrange;
  };
  const std::vector<Case> cases = {
      {"a table below ranges.above", [](RangedHarness& h) { h.table.ranges.above = 401; }},
      {"a table one range would hold", [](RangedHarness& h) { h.table.ranges.size = 400; }},
      {"a source not read by page ranges (a view, a partitioned table, before 14)",
       [](RangedHarness& h) { h.source.extent.reset(); }},
      {"a role that may not LOCK the table", [](RangedHarness& h) { h.source.may_lock = false; }},
      {"a table without a key", [](RangedHarness& h) { h.table.key.clear(); }},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    RangedHarness h;
    c.arrange(h);
    const RunSummary s = h.run();
    REQUIRE(s.status == RunStatus::Success);
    CHECK(h.target.ranges_written.empty());
    CHECK(s.chunks == 1);
    CHECK(h.target_matches_source());
    CHECK(h.state.ranges.empty());
  }
}

TEST_CASE("ranged first load: a table with a watermark reads no ranges and asks nothing more") {
  RangedHarness h;
  REQUIRE(h.run().status == RunStatus::Success);
  h.source.rows.push_back({9, 90, 3});
  h.target.ranges_written.clear();
  const int read = h.state.ranges_read;
  const int asked = h.target.holds_rows_asked;
  const int measured = h.source.measured;
  REQUIRE(h.run().status == RunStatus::Success);
  CHECK(h.target.ranges_written.empty());
  CHECK(h.state.ranges_planned == 1);
  CHECK(h.state.ranges_read == read);
  CHECK(h.target.holds_rows_asked == asked);
  CHECK(h.source.measured == measured);
  CHECK(h.target_matches_source());
}

TEST_CASE("ranged first load: a resume that cannot read ranges any more leaves it all to the diff") {
  struct Case {
    const char* name;
    std::function<void(RangedHarness&)> arrange;
  };
  const std::vector<Case> cases = {
      {"the role may no longer LOCK the table", [](RangedHarness& h) { h.source.may_lock = false; }},
      {"the source is no longer a plain table", [](RangedHarness& h) { h.source.extent.reset(); }},
      {"the table has no key any more", [](RangedHarness& h) { h.table.key.clear(); }},
      {"every range was done, the plan not yet forgotten",
       [](RangedHarness& h) {
         for (LoadRange& r : h.state.ranges) r.done = true;
       }},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    RangedHarness h;
    h.target.fail_at_chunk = 2;
    REQUIRE(h.run().status == RunStatus::Failed);
    h.target.fail_at_chunk = -1;
    h.target.ranges_written.clear();
    h.source.rows.push_back({9, 90, 3});
    c.arrange(h);
    const RunSummary s = h.run();
    REQUIRE(s.status == RunStatus::Success);
    CHECK(h.target.ranges_written.empty());
    CHECK(h.target_matches_source());  // the diff's doing
    CHECK(h.state.ranges.empty());
    CHECK(h.state.watermark == h.clock());
    CHECK(s.snapshot_path.rfind("first load of 4 ranges resumed by the diff alone: ", 0) == 0);
    CHECK_FALSE(h.source.snapshot_open);
  }
}

TEST_CASE("ranged first load: ranges a changed table left behind are forgotten by its next snapshot") {
  RangedHarness h;
  REQUIRE(h.run().status == RunStatus::Success);
  h.state.ranges = {{0, {0, 2}, true}, {1, {2, {}}, false}};  // as a load before a mode change left them
  REQUIRE(h.run().status == RunStatus::Success);
  CHECK(h.state.ranges.empty());
}

TEST_CASE("ranged first load: a cancel between ranges stops before the next") {
  RangedHarness h;
  h.target.cancel_after_first = &h.cancel;
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::Cancelled);
  CHECK(h.target.ranges_written.size() == 1);
  CHECK_FALSE(h.state.watermark);
  CHECK(h.state.ranges.at(0).done);
  CHECK_FALSE(h.source.snapshot_open);
}

}  // namespace tidemark
