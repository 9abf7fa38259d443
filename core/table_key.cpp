#include "core/table_key.h"

#include <cstring>

namespace tidemark {

std::int64_t advisory_lock_key(const TableKey& key) {
  std::uint64_t hash = 14695981039346656037ULL;
  const auto mix = [&](const std::string& text) {
    for (unsigned char c : text) {
      hash ^= c;
      hash *= 1099511628211ULL;
    }
  };
  mix("tidemark\x1f" + key.pipeline + "\x1f" + key.table);
  std::int64_t out = 0;
  std::memcpy(&out, &hash, sizeof out);
  return out;
}

}  // namespace tidemark
