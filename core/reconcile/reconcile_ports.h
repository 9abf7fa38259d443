// What reconcile compares and changes, as small interfaces: each side's
// rows seen through buckets (count and checksum of the keys' and rows'
// hashes per bucket) and the keys of chosen buckets, in order, each with
// its row's hash. daemon/ implements them
// over libpq (PgKeySide); tests/ has fakes. Expected failures are values.
// An instance serves one reconcile on one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/sql/key_row.h"
#include "core/sql/row_fingerprint.h"
#include "core/result.h"
#include "core/run/run_ports.h"
#include "core/watermark/cursor_value.h"

namespace tidemark {

// One bucket of a side's key set: how many keys hash into it and the sum
// of a second hash of each (as decimal text: it is a numeric on the server).
struct BucketSum {
  std::int64_t bucket = 0;
  std::int64_t rows = 0;
  std::string checksum;
};

// What both sides compare: the source's rows below `watermark` (the
// target ignores it) and, of each row, `columns` (those the target loads
// from the source with the same type: row_fingerprint.h's hash rules).
struct KeyCompare {
  CursorValue watermark;
  std::vector<FingerprintColumn> columns;
};

// One side of the comparison. The source side compares only the keys whose
// cursor is below the watermark (what the target is expected to hold); the
// target side only the rows not marked deleted. The key listing returns
// every key of the buckets asked for, flagged (KeyRow::flag), so that a
// source row whose cursor moved past the watermark since it was loaded is
// not mistaken for a deleted one.
class KeySide {
 public:
  virtual ~KeySide() = default;
  // About how many rows the table holds (planner statistics: cheap, may be
  // stale or 0); sizes the buckets before the exact counts are known.
  virtual Result<std::int64_t> estimate_rows() = 0;
  // The two long steps, the aggregate and the listing, are asked in two
  // halves, so that both sides work at once: the send_ half starts the
  // step and returns, the other waits for it. Once a step is sent nothing
  // else may be asked of the side until it is collected.
  //
  // Count and checksum of every non-empty bucket out of `buckets`, in one
  // aggregate query.
  virtual Status send_bucket_sums(std::int64_t buckets, const KeyCompare& compare) = 0;
  virtual Result<std::vector<BucketSum>> bucket_sums() = 0;
  // Lists every key in the buckets `which` (out of `buckets`), ordered by
  // KeyRow::operator<, in one pass over the table, to be read piece by
  // piece with next_keys while other transactions commit between the
  // pieces. Replaces a listing still open.
  virtual Status send_open_keys(std::int64_t buckets, const std::vector<std::int64_t>& which,
                                const KeyCompare& compare) = 0;
  virtual Status open_keys() = 0;
  // The next `most` keys of the listing (fewer only at its end).
  virtual Result<std::vector<KeyRow>> next_keys(std::size_t most) = 0;
  // Ends the listing; best effort, never fails loudly.
  virtual void close_keys() = 0;
  // Of `keys` (from a listing of either side), the positions of those
  // whose key the side holds now, in a snapshot of its own: the listing's
  // is as old as the reconcile, and a key may have come back since.
  // Matched by each key column's value, not by the key's text (which may
  // differ between the sides). The target side holds only rows not
  // marked deleted.
  virtual Result<std::vector<std::size_t>> held_now(const std::vector<KeyRow>& keys) = 0;
};

}  // namespace tidemark
