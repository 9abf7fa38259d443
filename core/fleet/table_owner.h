// Which member of a fleet owns a table: rendezvous hashing over the live
// members' ids, so that a member joining or leaving moves only the tables
// it gains or had (about 1/N of them), and any two members that know each
// other never both pick themselves. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/fleet/fleet_member.h"
#include "core/run/table_key.h"

namespace tidemark {

// The weight of `member` for `table`; the highest weight owns it. Every
// version on every host computes the same.
std::uint64_t ownership_weight(const TableKey& table, const std::string& member);

// The index in `members` of the table's owner (requires members not
// empty; ties, which need equal ids, go to the first).
std::size_t table_owner(const TableKey& table, const std::vector<std::string>& members);

// The member of `members` (the live ones) that owns `table`, or nullptr
// when there is none: what `status` and `fleet` show. A member that has
// just joined is named before it fires: it waits until the others have
// seen it.
const FleetMember* owning_member(const TableKey& table, const std::vector<FleetMember>& members);

}  // namespace tidemark
