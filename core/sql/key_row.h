// A key as reconcile compares it, the same value on both sides. A plain
// value type; copy and move freely, not synchronised.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tidemark {

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
  // The row's hash over the compared columns (row_hash_sql): equal keys
  // with unequal hashes are a row that changed.
  std::int64_t hash = 0;

  bool operator<(const KeyRow& other) const {
    return bucket != other.bucket ? bucket < other.bucket : text < other.text;
  }
};

}  // namespace tidemark
