// The row-diff engine's merge: both sides' (key, row hash) streams, read
// in step in one pass with constant memory beside the differences, into
// the keys whose source row the target needs (missing or changed) and
// the target keys the source lacks (gone). Snapshot runs use it to write
// only what changed. Pure: it reads its streams and nothing else;
// thread-safe as long as each call has streams of its own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/diff/key_list.h"
#include "core/diff/row_hash_stream.h"

namespace tidemark {

// When the merge stops collecting: past this many differences, or past
// this many bytes of collected keys, copying the differing rows one by one
// costs more than crossing the whole table (or would hold too much), and
// the caller crosses it whole instead.
struct RowDiffLimits {
  std::int64_t max_differences = 0;
  std::size_t max_key_bytes = 0;
};

// The limits for a table of `rows` rows (the larger side's count): a
// third of them (at least 10,000), and 32 MiB of keys.
RowDiffLimits row_diff_limits(std::int64_t rows);

struct RowDiffCounts {
  std::int64_t source_rows = 0;  // the rows its entries stand for (RowHash::rows)
  std::int64_t target_rows = 0;
  std::int64_t missing = 0;  // source keys the target lacks
  std::int64_t changed = 0;  // keys on both sides whose rows hash differently
  std::int64_t gone = 0;     // target keys the source lacks
};

struct RowDiff {
  explicit RowDiff(const std::vector<KeyOrder>& order) : fetch(order), gone(order) {}
  RowDiffCounts counts;
  KeyList fetch;  // missing and changed keys, ascending: the source rows to copy
  KeyList gone;   // ascending: the target rows to delete
  // Not empty: why the merge stopped collecting (a limit, a stream out of
  // key order or with a key twice). The lists are then incomplete; the
  // counts of rows are whole, as both streams were read to their end,
  // which leaves their sessions ready for the next statement.
  std::string gave_up;
};

// Requires each stream's keys to have a field for each entry of `order`.
// A stream out of order or repeating a key makes the merge give up rather
// than guess: the caller's whole crossing then applies its own rules.
Result<RowDiff> diff_rows(RowHashStream& source, RowHashStream& target, const std::vector<KeyOrder>& order,
                          const RowDiffLimits& limits);

}  // namespace tidemark
