// The row diff's first level for a table keyed by one integer column:
// its key range cut into blocks of about kRowsPerBlock rows, each block
// compared by (count, checksum) on both sides, so that only the rows of
// blocks that differ are hashed row by row and cross. A value type; pure.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/diff/key_list.h"

namespace tidemark {

// Rows a block holds on average. With changes spread evenly, a fraction p
// of changed rows touches 1 - (1 - p)^16 of the blocks (15 % at p = 1 %),
// and each block costs a row of the first level.
inline constexpr std::int64_t kRowsPerBlock = 16;

// Block b holds the keys in [origin + b * width, origin + (b + 1) * width);
// the keys that are NULL form a block of their own.
struct KeyBlocks {
  std::int64_t origin = 0;
  std::int64_t width = 1;
  std::int64_t count = 0;  // blocks over [min, max]
};

// The blocks for keys in [min, max] on `rows` rows (the larger side's);
// nothing when the range is too wide to cut in bigint arithmetic.
std::optional<KeyBlocks> key_blocks(std::int64_t min, std::int64_t max, std::int64_t rows);

// The blocks that differ: every key of the first level's fetch and gone
// lists (each a list of single-integer keys), ascending, without repeats;
// `null_block` says whether the block of NULL keys is among them.
std::vector<std::int64_t> differing_blocks(const KeyList& fetch, const KeyList& gone, bool& null_block);

}  // namespace tidemark
