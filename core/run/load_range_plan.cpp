#include "core/run/load_range_plan.h"

#include <algorithm>

namespace tidemark {

std::optional<std::vector<PageRange>> plan_load_ranges(const TableExtent& extent, const LoadRanges& ranges) {
  if (extent.bytes < ranges.above || extent.pages <= 1 || extent.bytes <= 0) return std::nullopt;
  // Pages per range in proportion to the bytes each page stands for,
  // rounded up so the ranges never number more than bytes / size, plus one.
  const double bytes_per_page = static_cast<double>(extent.bytes) / static_cast<double>(extent.pages);
  const std::int64_t fewest_pages = (extent.pages + kMaxLoadRanges - 1) / kMaxLoadRanges;
  const auto per_range = std::max<std::int64_t>(
      fewest_pages, static_cast<std::int64_t>(static_cast<double>(ranges.size) / bytes_per_page + 0.999999));
  if (per_range >= extent.pages) return std::nullopt;
  std::vector<PageRange> out;
  for (std::int64_t first = 0; first < extent.pages; first += per_range) {
    out.push_back(PageRange{first, first + per_range});
  }
  out.back().end.reset();
  return out;
}

std::vector<LoadRange> ranges_left(const std::vector<LoadRange>& plan) {
  std::vector<LoadRange> out;
  std::copy_if(plan.begin(), plan.end(), std::back_inserter(out), [](const LoadRange& r) { return !r.done; });
  return out;
}

}  // namespace tidemark
