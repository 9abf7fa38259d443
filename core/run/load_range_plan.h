// Where a snapshot table's first load cuts the source table into page
// ranges (docs/engine.md, "Ranged first loads"), and which of a stored
// plan's ranges are left: pure decisions from the table's size, its
// `ranges:` and the ranges recorded. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/config/config_model.h"
#include "core/sql/page_range.h"

namespace tidemark {

// A heap table's size as its files say: its heap's pages
// (pg_relation_size) and its bytes, heap and TOAST (pg_table_size).
struct TableExtent {
  std::int64_t pages = 0;
  std::int64_t bytes = 0;
};

// The most ranges one load is cut into: each is a target transaction and
// a row of its plan, so a tiny `size` over a huge table makes its ranges
// larger instead.
inline constexpr std::int64_t kMaxLoadRanges = 100000;

// One range of a plan, as the state stores it.
struct LoadRange {
  int index = 0;
  PageRange pages;
  bool done = false;
};

// The ranges of a first load: consecutive, from page 0, each about
// `ranges.size` bytes of the table (its TOAST counted in: a table whose
// values live in TOAST has few heap pages for its bytes), the last one
// open-ended, so that rows on pages added since the table was measured
// are read too; at most kMaxLoadRanges. Nothing when the table is smaller
// than `ranges.above`, or would be one range anyway.
std::optional<std::vector<PageRange>> plan_load_ranges(const TableExtent& extent, const LoadRanges& ranges);

// The ranges of `plan` not yet done, in order.
std::vector<LoadRange> ranges_left(const std::vector<LoadRange>& plan);

}  // namespace tidemark
