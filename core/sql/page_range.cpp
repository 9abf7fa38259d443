#include "core/sql/page_range.h"

#include <cstdlib>

namespace tidemark {
namespace {

std::string first_tid(std::int64_t page) { return "'(" + std::to_string(page) + ",0)'::tid"; }

}  // namespace

std::string ctid_range_predicate(const PageRange& range) {
  if (range.first < 0 || (range.end && *range.end <= range.first)) std::abort();  // an empty or negative range
  // Every tuple of page p sorts at or after (p,0) and before (p+1,0).
  std::string out = "ctid >= " + first_tid(range.first);
  if (range.end) out += " AND ctid < " + first_tid(*range.end);
  return out;
}

std::string page_range_text(const PageRange& range) {
  return range.end ? "pages " + std::to_string(range.first) + " to " + std::to_string(*range.end)
                   : "pages from " + std::to_string(range.first) + " on";
}

}  // namespace tidemark
