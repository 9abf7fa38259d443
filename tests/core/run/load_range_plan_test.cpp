// Where a ranged first load cuts a table: ranges of about `size` bytes,
// TOAST counted in, consecutive from page 0, the last open-ended.
#include "core/run/load_range_plan.h"

#include <doctest/doctest.h>

namespace tidemark {

TEST_CASE("load range plan: consecutive ranges of about size bytes, the last one open-ended") {
  struct Case {
    const char* name;
    TableExtent extent;
    LoadRanges ranges;
    std::vector<PageRange> expected;  // empty: one stream
  };
  constexpr std::int64_t kMB = std::int64_t{1} << 20;
  const std::vector<Case> cases = {
      {"below above: one stream", {1000, 1000 * 8192}, {1000 * 8192 + 1, kMB}, {}},
      {"at above: ranges", {1000, 1000 * 8192}, {1000 * 8192, 2 * kMB}, {{0, 256}, {256, 512}, {512, 768}, {768, {}}}},
      {"a heap of 8kB pages in 1MB ranges", {384, 384 * 8192}, {0, kMB}, {{0, 128}, {128, 256}, {256, {}}}},
      {"pages that do not divide evenly", {300, 300 * 8192}, {0, kMB}, {{0, 128}, {128, 256}, {256, {}}}},
      // 2 MB values in TOAST: 10 heap pages stand for 100 MB, so a 20 MB
      // range is 2 pages.
      {"TOAST counted in: few pages for many bytes", {10, 100 * kMB}, {0, 20 * kMB},
       {{0, 2}, {2, 4}, {4, 6}, {6, 8}, {8, {}}}},
      {"a range smaller than a page still holds one", {3, 3 * 8192}, {0, 8192 / 2}, {{0, 1}, {1, 2}, {2, {}}}},
      {"one range would hold it all: one stream", {100, 100 * 8192}, {0, 100 * 8192}, {}},
      {"one page: one stream", {1, 8192}, {0, 8192}, {}},
      {"an empty table: one stream", {0, 0}, {0, 8192}, {}},
      {"pages but no bytes counted: one stream", {10, 0}, {0, 8192}, {}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const auto plan = plan_load_ranges(c.extent, c.ranges);
    if (c.expected.empty()) {
      CHECK_FALSE(plan);
    } else {
      REQUIRE(plan);
      CHECK(*plan == c.expected);
    }
  }
}

TEST_CASE("load range plan: a tiny size over a huge table makes larger ranges, never more than kMaxLoadRanges") {
  // 1 TB of 8 kB pages in 8 kB ranges would be 134 million ranges.
  const std::int64_t pages = (std::int64_t{1} << 40) / 8192;
  const auto plan = plan_load_ranges({pages, pages * 8192}, {0, 8192});
  REQUIRE(plan);
  CHECK(static_cast<std::int64_t>(plan->size()) <= kMaxLoadRanges);
  CHECK(static_cast<std::int64_t>(plan->size()) >= kMaxLoadRanges * 99 / 100);
  CHECK(plan->front() == PageRange{0, (pages + kMaxLoadRanges - 1) / kMaxLoadRanges});
  CHECK_FALSE(plan->back().end);
}

TEST_CASE("load range plan: the ranges left are those not done, in order") {
  const std::vector<LoadRange> plan = {{0, {0, 4}, true}, {1, {4, 8}, false}, {2, {8, 12}, true}, {3, {12, {}}, false}};
  const std::vector<LoadRange> left = ranges_left(plan);
  REQUIRE(left.size() == 2);
  CHECK(left[0].index == 1);
  CHECK(left[1].index == 3);
  CHECK(ranges_left({}).empty());
}

TEST_CASE("page range: its rows as a condition on ctid, and in words") {
  CHECK(ctid_range_predicate({0, 128}) == "ctid >= '(0,0)'::tid AND ctid < '(128,0)'::tid");
  CHECK(ctid_range_predicate({256, std::nullopt}) == "ctid >= '(256,0)'::tid");
  CHECK(page_range_text({0, 128}) == "pages 0 to 128");
  CHECK(page_range_text({256, std::nullopt}) == "pages from 256 on");
}

}  // namespace tidemark
