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
  lease_end_ = Steady::min();
}

FleetView MemberLease::renewed(const Renewal& renewal, Steady sent, Steady received) {
  // Back before the previous renewal's sent + lease, it committed before
  // the database could end that lease: no other member can have dropped
  // this one meanwhile. The allowance covers the two clocks' rates.
  constexpr Steady kDrift = std::chrono::milliseconds(100);
  const bool late = lease_end_ != Steady::min() && received >= lease_end_ - kDrift;
  if (!renewal.extended || late) {
    joined_ = false;
    settled_ = false;
    lease_end_ = Steady::min();
    return FleetView::none();
  }
  // Every view without this member came from a renewal sent before this
  // member's registration committed, so it ends within its holder's lease
  // of joined_at_ (a member's lease is lease_until - renewed_at). Once the
  // longest has passed, no other member still fires this one's share.
  // Only live members can hold one: a member whose lease the database
  // has ended stopped acting before that on its own clock. So a member
  // alone fires at once; of two joining together, the one whose renewal
  // did not see the other's registration fires at once, and the other,
  // which saw it, waits out its lease.
  if (!settled_) {
    std::chrono::microseconds longest{0};
    for (const FleetMember& m : renewal.others) longest = std::max(longest, m.lease_until - m.renewed_at);
    settled_ = renewal.db_now >= joined_at_ + longest;
  }
  std::vector<std::string> members{self_};
  for (const FleetMember& m : renewal.others) members.push_back(m.member_id);
  // The margin covers the moment between the lease check and a run taking
  // its table's lock, which checks ownership again.
  const Steady lease = std::chrono::duration_cast<Steady>(lease_);
  const Steady margin = std::max<Steady>(lease / 6, std::chrono::milliseconds(500));
  lease_end_ = sent + lease;
  return FleetView(self_, std::move(members), settled_, sent + lease - margin);
}

bool MemberLease::may_gain(const FleetView& previous, const FleetView& next, Steady now) {
  if (!next.settled()) return false;
  if (previous.lapsed(now) || !previous.settled()) return true;
  // A member that joined only takes; one that left gives.
  return !std::includes(next.members().begin(), next.members().end(), previous.members().begin(),
                        previous.members().end());
}

}  // namespace tidemark
