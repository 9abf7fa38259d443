// Rendezvous ownership: a fair share for each member, a join or a leave
// moving only the share it gains or had, and two members that know each
// other never both taking a table.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "core/fleet/table_owner.h"

namespace tidemark {
namespace {

std::vector<TableKey> tables(int count) {
  std::vector<TableKey> out;
  for (int i = 0; i < count; ++i) out.push_back({"pipeline_" + std::to_string(i % 7), "table_" + std::to_string(i)});
  return out;
}

// Member ids as serve generates them: 32 hex digits.
const std::vector<std::string> kMembers{"3f6c1e0a9b2d4c8e91a7f05d6e2b4c13", "a1b2c3d4e5f60718293a4b5c6d7e8f90",
                                        "0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a", "77aa01bb22cc33dd44ee55ff66007788"};

std::map<std::string, std::string> owners(const std::vector<TableKey>& keys, const std::vector<std::string>& members) {
  std::map<std::string, std::string> out;
  for (const TableKey& t : keys) out[t.display()] = members[table_owner(t, members)];
  return out;
}

}  // namespace

TEST_CASE("6,000 tables over 3 members: each owns 2,000 within 10 %") {
  const std::vector<std::string> three(kMembers.begin(), kMembers.begin() + 3);
  std::map<std::string, int> count;
  for (const auto& [table, owner] : owners(tables(6000), three)) ++count[owner];
  REQUIRE(count.size() == 3);
  for (const auto& entry : count) {
    CAPTURE(entry.first);
    CHECK(entry.second >= 1800);
    CHECK(entry.second <= 2200);
  }
}

TEST_CASE("a fourth member takes about a quarter, and only from the others: no table moves between them") {
  const auto keys = tables(6000);
  const std::vector<std::string> three(kMembers.begin(), kMembers.begin() + 3);
  const auto before = owners(keys, three);
  const auto after = owners(keys, kMembers);
  int moved = 0;
  for (const auto& [table, owner] : after) {
    if (owner == before.at(table)) continue;
    ++moved;
    CHECK(owner == kMembers[3]);
  }
  CHECK(moved >= 1350);  // a quarter of 6,000 is 1,500
  CHECK(moved <= 1650);
}

TEST_CASE("a member leaving moves only its own tables, spread over the rest") {
  const auto keys = tables(6000);
  const auto before = owners(keys, kMembers);
  const std::vector<std::string> without_second{kMembers[0], kMembers[2], kMembers[3]};
  const auto after = owners(keys, without_second);
  std::map<std::string, int> heirs;
  for (const auto& [table, owner] : before) {
    if (owner == kMembers[1]) {
      ++heirs[after.at(table)];
    } else {
      CHECK(after.at(table) == owner);
    }
  }
  REQUIRE(heirs.size() == 3);
  for (const auto& [member, gained] : heirs) CHECK(gained > 300);  // about 500 each
}

TEST_CASE("two members that both know each other never both pick themselves, whatever else each knows") {
  // Views that differ only in members one of them has not seen yet or
  // has already seen leave.
  const auto keys = tables(2000);
  const std::vector<std::vector<std::string>> views{
      {kMembers[0], kMembers[1]},
      {kMembers[0], kMembers[1], kMembers[2]},
      {kMembers[0], kMembers[1], kMembers[3]},
      kMembers,
  };
  for (const auto& a : views) {
    for (const auto& b : views) {
      for (const TableKey& t : keys) {
        const std::string& by_a = a[table_owner(t, a)];
        const std::string& by_b = b[table_owner(t, b)];
        // Member 0 acts on view a and member 1 on view b.
        if (by_a == kMembers[0] && by_b == kMembers[1]) FAIL("both own " << t.display());
      }
    }
  }
}

TEST_CASE("the weight is the same in every version: mixed versions in a fleet agree on every owner") {
  // A changed hash would make a rolling upgrade's old and new members
  // both fire (or both skip) a share of the tables.
  CHECK(ownership_weight({"shop", "orders"}, "3f6c1e0a9b2d4c8e91a7f05d6e2b4c13") == 1864524679300414901ULL);  // FNV-1a, MurmurHash3 fmix64: computed apart, in Python
}

}  // namespace tidemark
