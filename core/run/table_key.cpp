#include "core/run/table_key.h"

#include <cstring>

namespace tidemark {

namespace {

std::int64_t fnv1a(const std::string& text) {
  const std::uint64_t hash = stable_text_hash(text);
  std::int64_t out = 0;
  std::memcpy(&out, &hash, sizeof out);
  return out;
}

}  // namespace

std::uint64_t stable_text_hash(std::string_view text) {
  std::uint64_t hash = 14695981039346656037ULL;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  return hash;
}

std::int64_t advisory_lock_key(const TableKey& key) {
  return fnv1a("tidemark\x1f" + key.pipeline + "\x1f" + key.table);
}

std::int64_t partition_lock_key(const TableKey& key, std::int64_t partition_lo_unix_seconds) {
  return fnv1a("tidemark\x1f" + key.pipeline + "\x1f" + key.table + "\x1f" + std::to_string(partition_lo_unix_seconds));
}

}  // namespace tidemark
