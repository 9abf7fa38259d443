// A range of a heap table's pages, [first, end), the unit a ranged first
// load reads and commits (docs/engine.md, "Ranged first loads"); its rows
// are those whose CTID lies in it, which PostgreSQL 14 and later read by
// a TID range scan, touching those pages only. A plain value; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tidemark {

struct PageRange {
  std::int64_t first = 0;
  std::optional<std::int64_t> end;  // nothing: to the table's end, however far it has grown

  bool operator==(const PageRange& o) const { return first == o.first && end == o.end; }
};

// The rows of `range` as a WHERE condition on ctid: tid literals made of
// digits only. Requires first >= 0 and end, if any, above first.
std::string ctid_range_predicate(const PageRange& range);

// "pages 0 to 4096", "pages from 8192 on", for messages and the log.
std::string page_range_text(const PageRange& range);

}  // namespace tidemark
