// What reconcile compares and changes, as small interfaces: each side's
// key set seen through buckets (count and checksum of the keys' hashes per
// bucket) and the keys of chosen buckets, in order. daemon/ implements them
// over libpq (PgKeySide); tests/ has fakes. Expected failures are values.
// An instance serves one reconcile on one thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/watermark/cursor_value.h"

namespace tidemark {

// One bucket of a side's key set: how many keys hash into it and the sum
// of a second hash of each (as decimal text: it is a numeric on the server).
struct BucketSum {
  std::int64_t bucket = 0;
  std::int64_t rows = 0;
  std::string checksum;
};

// One key. Rows are ordered by (bucket, text), text compared byte by byte
// (COLLATE "C" on the server, std::string's order here), the same on both
// sides whatever their collations.
struct KeyRow {
  std::int64_t bucket = 0;
  std::string text;  // the whole key as one text: ROW(k1, k2, ...)::text
  std::vector<std::optional<std::string>> columns;  // each key column as text, to name the row again
  // Source: its cursor is below the watermark (the target must hold it).
  // Target: its mark_column is set already (action mark).
  bool flag = false;

  bool operator<(const KeyRow& other) const {
    return bucket != other.bucket ? bucket < other.bucket : text < other.text;
  }
};

// One side of the comparison. The source side compares only the keys whose
// cursor is below the watermark (what the target is expected to hold); the
// target side only the rows not marked deleted. keys() returns every key of
// the buckets asked for, flagged (KeyRow::flag), so that a source row whose
// cursor moved past the watermark since it was loaded is not mistaken for
// a deleted one.
class KeySide {
 public:
  virtual ~KeySide() = default;
  // About how many rows the table holds (planner statistics: cheap, may be
  // stale or 0); sizes the buckets before the exact counts are known.
  virtual Result<std::int64_t> estimate_rows() = 0;
  // Count and checksum of every non-empty bucket out of `buckets`, in one
  // aggregate query. `watermark`: the source's filter; the target ignores it.
  virtual Result<std::vector<BucketSum>> bucket_sums(std::int64_t buckets, const CursorValue& watermark) = 0;
  // Every key in the buckets `which` (out of `buckets`), ordered by KeyRow::operator<.
  virtual Result<std::vector<KeyRow>> keys(std::int64_t buckets, const std::vector<std::int64_t>& which,
                                           const CursorValue& watermark) = 0;
};

}  // namespace tidemark
