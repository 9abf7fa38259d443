// What one member of a fleet may fire: the live members as its last
// renewal found them, whether each of them has seen this member, and until
// when, on this member's steady clock, it may act on that. Built by
// MemberLease, read by TableScheduler. Value type; thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "core/run/table_key.h"

namespace tidemark {

class FleetView {
 public:
  using Steady = std::chrono::steady_clock::duration;  // since the steady clock's epoch

  // A process that is the whole fleet and never loses it: it owns every
  // table (a scheduler outside a fleet).
  static FleetView sole();
  // Owns nothing: before a member's first renewal, and after its lease ended.
  static FleetView none();

  // `members` holds `self`. `settled`: every other member has renewed
  // since this one joined, so none of them still fires what this one owns.
  FleetView(std::string self, std::vector<std::string> members, bool settled, Steady valid_until);

  // Whether this member fires `table` at `now`: its lease still holds by
  // its own clock, every member has seen it, and rendezvous over the
  // members picks it (TableOwner).
  bool owns(const TableKey& table, Steady now) const { return !lapsed(now) && picks(table); }
  // Whether this view gives `table` to this member, lease aside.
  bool picks(const TableKey& table) const;
  // Whether it will, once settled: the member it names among its members,
  // whether or not every other member has seen this one yet.
  bool picks_once_settled(const TableKey& table) const;
  // The lease it was built from may have ended: nothing is owned.
  bool lapsed(Steady now) const { return now >= valid_until_; }
  bool settled() const { return settled_; }
  const std::string& self() const { return self_; }
  // Same members and settled alike: only the lease's end may differ.
  bool same_fleet(const FleetView& other) const {
    return settled_ == other.settled_ && self_ == other.self_ && members_ == other.members_;
  }
  // Sorted; empty for none().
  const std::vector<std::string>& members() const { return members_; }

 private:
  std::string self_;
  std::vector<std::string> members_;
  bool settled_ = false;
  Steady valid_until_{};
};

}  // namespace tidemark
