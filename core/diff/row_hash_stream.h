// One side of the row diff: a table's rows as (key, row hash), ascending
// in the diff's key order, each key column compared as KeyOrder says. A
// port: daemon/pg streams it from a COPY, tests/ from a list. Expected
// failures (a lost session, a cancel) are values. An instance serves one
// diff on one thread.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace tidemark {

// How one key column compares, the same way on the server that sorts it
// and here: as a bigint, or as bytes (its text under COLLATE "C", which
// is memcmp's order). NULL comes after every value, as ORDER BY puts it.
enum class KeyOrder { Integer, Bytes };

// One key column's value in a row: a view, valid until the stream that
// gave it moves on.
struct KeyField {
  bool null = false;
  std::int64_t integer = 0;  // KeyOrder::Integer
  std::string_view bytes;    // KeyOrder::Bytes
};

struct RowHash {
  std::vector<KeyField> key;
  std::uint64_t hash = 0;
  // The table rows the entry stands for: 1 for a row, a block's count for
  // a block (core/diff/key_blocks.h).
  std::int64_t rows = 1;
};

// Negative, zero or positive as `a` sorts before, with or after `b`;
// both have a field for each entry of `order`.
int compare_keys(const std::vector<KeyField>& a, const std::vector<KeyField>& b, const std::vector<KeyOrder>& order);

class RowHashStream {
 public:
  virtual ~RowHashStream() = default;
  // The next row into `row` (its fields point into the stream's buffer
  // until the next call); false after the last one.
  virtual Result<bool> next(RowHash& row) = 0;
};

}  // namespace tidemark
