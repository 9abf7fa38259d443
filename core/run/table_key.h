// The identity of a table's state: (pipeline, table name), and the
// advisory-lock key derived from it. Value type; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tidemark {

struct TableKey {
  std::string pipeline;
  std::string table;

  std::string display() const { return pipeline + "." + table; }
  friend bool operator==(const TableKey& a, const TableKey& b) {
    return a.pipeline == b.pipeline && a.table == b.table;
  }
  friend bool operator<(const TableKey& a, const TableKey& b) {
    return a.pipeline != b.pipeline ? a.pipeline < b.pipeline : a.table < b.table;
  }
};

// FNV-1a (64 bit) of `text`: a hash that every version on every host
// computes alike, for keys that replicas must agree on.
std::uint64_t stable_text_hash(std::string_view text);

// The key of pg_try_advisory_lock(bigint) for a table: FNV-1a (64 bit) of
// "tidemark\x1f<pipeline>\x1f<table>". Stable across versions and hosts,
// so every replica contends for the same lock.
std::int64_t advisory_lock_key(const TableKey& key);

// The key of one partition's lock: the same hash over the table and the
// partition's start in Unix seconds.
std::int64_t partition_lock_key(const TableKey& key, std::int64_t partition_lo_unix_seconds);

}  // namespace tidemark
