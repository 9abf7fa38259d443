#include "core/diff/key_blocks.h"

#include <algorithm>
#include <iterator>
#include <limits>

namespace tidemark {

std::optional<KeyBlocks> key_blocks(std::int64_t min, std::int64_t max, std::int64_t rows) {
  if (max < min) return std::nullopt;
  constexpr std::uint64_t kMax = std::numeric_limits<std::int64_t>::max();
  // Unsigned arithmetic is exact here: max - min as a difference of
  // two's complement values, and every bound below is checked first.
  const std::uint64_t distance = static_cast<std::uint64_t>(max) - static_cast<std::uint64_t>(min);
  // The statements compute key - origin for every key, and origin +
  // b * width + width for every block, the width itself a bigint (a range
  // of 2^63 keys in one block has none).
  if (distance > kMax) return std::nullopt;
  const std::uint64_t span = distance + 1;
  const auto wanted = static_cast<std::uint64_t>(std::max<std::int64_t>(rows / kRowsPerBlock, 1));
  const std::uint64_t width = (span + wanted - 1) / wanted;
  const std::uint64_t count = (span + width - 1) / width;
  if (width > kMax || count * width > kMax - static_cast<std::uint64_t>(min)) return std::nullopt;
  return KeyBlocks{min, static_cast<std::int64_t>(width), static_cast<std::int64_t>(count)};
}

std::vector<std::int64_t> differing_blocks(const KeyList& fetch, const KeyList& gone, bool& null_block) {
  null_block = false;
  std::vector<std::int64_t> a = fetch.integers(null_block);
  bool gone_null = false;
  std::vector<std::int64_t> b = gone.integers(gone_null);
  null_block = null_block || gone_null;
  std::vector<std::int64_t> out;
  out.reserve(a.size() + b.size());
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

}  // namespace tidemark
