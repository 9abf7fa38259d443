#include "core/fleet/table_owner.h"

#include <cstdlib>

namespace tidemark {
namespace {

// MurmurHash3's 64-bit finalizer: FNV-1a alone leaves strings that share a
// prefix with weights too alike to rank fairly.
std::uint64_t mix(std::uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

std::uint64_t weight(std::uint64_t table_hash, const std::string& member) {
  return mix(table_hash ^ mix(stable_text_hash(member)));
}

std::uint64_t table_hash(const TableKey& table) {
  return stable_text_hash("tidemark-owner\x1f" + table.pipeline + "\x1f" + table.table);
}

}  // namespace

std::uint64_t ownership_weight(const TableKey& table, const std::string& member) {
  return weight(table_hash(table), member);
}

std::size_t table_owner(const TableKey& table, const std::vector<std::string>& members) {
  if (members.empty()) std::abort();
  const std::uint64_t hashed = table_hash(table);
  std::size_t best = 0;
  std::uint64_t best_weight = weight(hashed, members[0]);
  for (std::size_t i = 1; i < members.size(); ++i) {
    const std::uint64_t w = weight(hashed, members[i]);
    if (w > best_weight) {
      best = i;
      best_weight = w;
    }
  }
  return best;
}

const FleetMember* owning_member(const TableKey& table, const std::vector<FleetMember>& members) {
  if (members.empty()) return nullptr;
  std::vector<std::string> ids;
  ids.reserve(members.size());
  for (const FleetMember& m : members) ids.push_back(m.member_id);
  return &members[table_owner(table, ids)];
}

}  // namespace tidemark
