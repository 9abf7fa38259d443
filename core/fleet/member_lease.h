// One member's side of the fleet's lease: when it must (re)join, how often
// it renews, and the FleetView each renewal gives it. The state database's
// clock decides whether a lease holds; the member's own steady clock only
// ever shortens it: a renewal sent at `sent` is acted on until
// sent + lease - margin, and the database cannot end it before
// sent + lease, so a member stops firing before another can take over.
// A member that joins fires nothing for the longest lease of the other
// live members: every view that lacks it was sent before it joined, and
// has ended by then on its holder's own clock, whether or not that holder
// has acted on a newer one. Alone, it fires at once.
// Owned by the member's renewal thread; not thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "core/fleet/fleet_member.h"
#include "core/fleet/fleet_view.h"

namespace tidemark {

class MemberLease {
 public:
  using Steady = FleetView::Steady;

  // What one renewal statement found, on the state database's clock.
  struct Renewal {
    bool extended = false;  // this member's row was live and now runs to db_now + lease
    DbInstant db_now{};
    std::vector<FleetMember> others;  // every other live member
  };

  // `lease` >= 3 s (the configuration's bound).
  MemberLease(std::string self, std::chrono::seconds lease);

  const std::string& self() const { return self_; }
  std::chrono::seconds lease() const { return lease_; }
  // A third of the lease: two renewals may fail before it runs out.
  Steady renew_every() const;

  // Whether the next round must register first: at start, and after the
  // database said this member's lease had ended (others may have its
  // tables, and must see it again before it takes any back).
  bool must_join() const { return !joined_; }
  // The registration committed; `db_now` is the database's clock read in
  // a transaction begun after that commit.
  void joined(DbInstant db_now);

  // A renewal sent at `sent` came back at `received`. Not extended, or
  // back only after the previous renewal's lease could have ended (the
  // database may have ended it before this renewal committed, and another
  // member taken the tables): this member owns nothing and joins again.
  FleetView renewed(const Renewal& renewal, Steady sent, Steady received);

  // Whether acting on `next` instead of `previous` at `now` may give this
  // member a table it did not fire a moment ago, whose last start must
  // then be read to tell whether its old owner missed a firing.
  static bool may_gain(const FleetView& previous, const FleetView& next, Steady now);

 private:
  std::string self_;
  std::chrono::seconds lease_;
  bool joined_ = false;
  DbInstant joined_at_{};
  bool settled_ = false;
  Steady lease_end_ = Steady::min();  // the last renewal's sent + lease; min() before one
};

}  // namespace tidemark
