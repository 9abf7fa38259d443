// The row diff's first look at a table whose fingerprints differ: the
// rows written on either side since the previous snapshot (their xmin at
// or after that snapshot's transaction horizon), which a scan finds
// without hashing a row. Their keys are compared row by row, and the look
// counts only when taking those rows out of both fingerprints leaves the
// two equal; else the whole diff runs. So the horizon is a hint: a wrong
// one costs time, never a row. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/diff/hash_tally.h"
#include "core/diff/key_list.h"

namespace tidemark {

// Each side's oldest transaction still running when a snapshot run read
// it (pg_snapshot_xmin, a 64-bit transaction id): every row written by a
// transaction that committed later has an xmin at or after it.
struct SnapshotHorizon {
  std::int64_t source = 0;
  std::int64_t target = 0;
};

// Whether rows written since `since` can be told by their 32-bit xmin on
// a server whose snapshot ends at `next` (pg_snapshot_xmax): `since` is
// not ahead of it (a server restored from an older copy, or another one)
// and less than 2^31 transactions behind, with room for those that start
// before the scan asks.
bool horizon_usable(std::int64_t since, std::int64_t next);

// The most keys the first look takes for a table of `rows` rows (the
// larger side's): past a quarter of them, looking each up costs more than
// the whole diff; past a million, they would hold too much memory.
std::int64_t recent_keys_limit(std::int64_t rows);

// The 32-bit xid `since` is at, as the scan's literal.
std::int64_t xid32(std::int64_t since);

// A side's fingerprint (core/sql/row_fingerprint.h): its rows, and their
// mixed hashes combined with bit_xor.
struct TableFingerprint {
  std::int64_t rows = 0;
  std::uint64_t combined = 0;
};

// Whether the target, with its rows of the recent keys replaced by the
// source's rows of them (`source_recent`, `target_recent`: both sides'
// rows of those keys, tallied), has the source's fingerprint: then the
// rows outside those keys are the same on both sides.
bool recent_rows_explain(const TableFingerprint& source, const TableFingerprint& target,
                         const HashTally& source_recent, const HashTally& target_recent);

// The keys of both streams (keys only; their hashes are ignored), each
// once, ascending in `order`. Nothing past `most` keys, or when a stream
// is out of order: the caller then diffs the whole table.
Result<std::optional<KeyList>> union_keys(RowHashStream& a, RowHashStream& b, const std::vector<KeyOrder>& order,
                                          std::size_t most);

}  // namespace tidemark
