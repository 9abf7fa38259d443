#include "core/fleet/member_lease.h"

#include <algorithm>
#include <utility>

namespace tidemark {

MemberLease::MemberLease(std::string self, std::chrono::seconds lease) : self_(std::move(self)), lease_(lease) {}

MemberLease::Steady MemberLease::renew_every() const { return std::chrono::duration_cast<Steady>(lease_) / 3; }

void MemberLease::joined(DbInstant db_now) {
  joined_ = true;
  joined_at_ = db_now;
  settled_ = false;
}

FleetView MemberLease::renewed(const Renewal& renewal, Steady sent) {
  if (!renewal.extended) {
    joined_ = false;
    settled_ = false;
    return FleetView::none();
  }
  // A member whose renewal began after this one joined read a list that
  // held it, and has stopped firing this one's share since. Once each has,
  // it stays so until this member has to join again.
  if (!settled_) {
    settled_ = std::all_of(renewal.others.begin(), renewal.others.end(),
                           [&](const FleetMember& m) { return m.renewed_at > joined_at_; });
  }
  std::vector<std::string> members{self_};
  for (const FleetMember& m : renewal.others) members.push_back(m.member_id);
  // The margin covers the moment between the lease check and a run taking
  // its table's lock; the advisory lock covers a run already going.
  const Steady lease = std::chrono::duration_cast<Steady>(lease_);
  const Steady margin = std::max<Steady>(lease / 6, std::chrono::milliseconds(500));
  return FleetView(self_, std::move(members), settled_, sent + lease - margin);
}

bool MemberLease::may_gain(const FleetView& previous, const FleetView& next, Steady now) {
  if (!next.settled()) return false;
  return previous.lapsed(now) || !previous.same_fleet(next);
}

}  // namespace tidemark
