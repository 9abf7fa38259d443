// The lease protocol of one member: when it has been seen by every other
// member, until when its own clock lets it act on a renewal, what a lease
// the database ended does, and when a new view may give it tables.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

#include "core/fleet/member_lease.h"
#include "core/time/instant_text.h"

namespace tidemark {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Steady = FleetView::Steady;

Instant at(const std::string& text) { return *parse_instant(text); }

FleetMember member(const std::string& id, const std::string& renewed_at) {
  FleetMember m;
  m.member_id = id;
  m.renewed_at = at(renewed_at);
  return m;
}

MemberLease::Renewal renewal(std::vector<FleetMember> others, bool extended = true) {
  MemberLease::Renewal r;
  r.extended = extended;
  r.db_now = at("2026-01-01T00:00:10Z");
  r.others = std::move(others);
  return r;
}

// A table each member picks, among "me", "x" and "y".
TableKey table_of(const std::string& wanted, const std::vector<std::string>& members) {
  for (int i = 0;; ++i) {
    const TableKey t{"p", "t" + std::to_string(i)};
    if (FleetView(wanted, members, true, Steady::max()).picks(t)) return t;
  }
}

}  // namespace

TEST_CASE("a member alone owns every table from its first renewal") {
  MemberLease lease("me", seconds(6));
  CHECK(lease.must_join());
  lease.joined(at("2026-01-01T00:00:00Z"));
  CHECK_FALSE(lease.must_join());
  const FleetView view = lease.renewed(renewal({}), Steady(seconds(100)));
  CHECK(view.settled());
  CHECK(view.owns({"p", "any"}, Steady(seconds(100))));
  CHECK(view.members() == std::vector<std::string>{"me"});
}

TEST_CASE("a joining member fires nothing until every other member has renewed since it joined") {
  MemberLease lease("me", seconds(6));
  lease.joined(at("2026-01-01T00:00:05Z"));
  const std::vector<std::string> all{"me", "x", "y"};
  const TableKey mine = table_of("me", all);

  // x renewed after the join and has seen "me"; y renewed before it: y
  // may still fire what is now "me"'s.
  FleetView view = lease.renewed(renewal({member("x", "2026-01-01T00:00:06Z"), member("y", "2026-01-01T00:00:04Z")}),
                                 Steady(seconds(10)));
  CHECK_FALSE(view.settled());
  CHECK_FALSE(view.owns(mine, Steady(seconds(10))));

  view = lease.renewed(renewal({member("x", "2026-01-01T00:00:08Z"), member("y", "2026-01-01T00:00:07Z")}),
                       Steady(seconds(12)));
  CHECK(view.settled());
  CHECK(view.owns(mine, Steady(seconds(12))));
  CHECK_FALSE(view.owns(table_of("x", all), Steady(seconds(12))));

  // A member that joins later has seen this one from its start.
  view = lease.renewed(renewal({member("x", "2026-01-01T00:00:10Z"), member("y", "2026-01-01T00:00:09Z"),
                                member("z", "2026-01-01T00:00:09Z")}),
                       Steady(seconds(14)));
  CHECK(view.settled());
}

TEST_CASE("a renewal is acted on until sent + lease - margin by the member's own clock, never later") {
  MemberLease lease("me", seconds(6));
  lease.joined(at("2026-01-01T00:00:00Z"));
  CHECK(lease.renew_every() == Steady(seconds(2)));
  const FleetView view = lease.renewed(renewal({}), Steady(seconds(100)));
  // The database ends the lease no sooner than 6 s after the renewal was
  // sent; this member stops 1 s (a sixth) before.
  CHECK(view.owns({"p", "t"}, Steady(seconds(104)) + Steady(milliseconds(999))));
  CHECK(view.lapsed(Steady(seconds(105))));
  CHECK_FALSE(view.owns({"p", "t"}, Steady(seconds(105))));
  CHECK(view.picks({"p", "t"}));

  MemberLease short_lease("me", seconds(3));
  short_lease.joined(at("2026-01-01T00:00:00Z"));
  const FleetView brief = short_lease.renewed(renewal({}), Steady(seconds(100)));
  CHECK_FALSE(brief.lapsed(Steady(seconds(102)) + Steady(milliseconds(499))));
  CHECK(brief.lapsed(Steady(seconds(102)) + Steady(milliseconds(500))));
}

TEST_CASE("a lease the database ended: nothing owned, join again, and wait to be seen again") {
  MemberLease lease("me", seconds(6));
  lease.joined(at("2026-01-01T00:00:00Z"));
  CHECK(lease.renewed(renewal({member("x", "2026-01-01T00:00:01Z")}), Steady(seconds(1))).settled());

  // Paused past its lease: x has taken its tables.
  const FleetView lost = lease.renewed(renewal({}, false), Steady(seconds(40)));
  CHECK_FALSE(lost.owns({"p", "t"}, Steady(seconds(40))));
  CHECK(lost.members().empty());
  CHECK(lease.must_join());

  lease.joined(at("2026-01-01T00:00:41Z"));
  CHECK_FALSE(lease.renewed(renewal({member("x", "2026-01-01T00:00:40Z")}), Steady(seconds(41))).settled());
  CHECK(lease.renewed(renewal({member("x", "2026-01-01T00:00:42Z")}), Steady(seconds(43))).settled());
}

TEST_CASE("when a new view may give tables, so that their last starts are read first") {
  const Steady now(seconds(50));
  const FleetView two("me", {"me", "x"}, true, Steady(seconds(60)));
  struct Case {
    const char* name;
    FleetView previous;
    FleetView next;
    bool may_gain;
  };
  const std::vector<Case> cases{
      {"same fleet, later lease", two, FleetView("me", {"me", "x"}, true, Steady(seconds(62))), false},
      {"a member left", two, FleetView("me", {"me"}, true, Steady(seconds(62))), true},
      {"a member joined (it only takes)", two, FleetView("me", {"me", "x", "y"}, true, Steady(seconds(62))), true},
      {"settled at last", FleetView("me", {"me", "x"}, false, Steady(seconds(60))), two, true},
      {"the previous lease had lapsed", FleetView("me", {"me", "x"}, true, Steady(seconds(49))), two, true},
      {"the first view", FleetView::none(), two, true},
      {"not settled yet", FleetView::none(), FleetView("me", {"me", "x"}, false, Steady(seconds(60))), false},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK(MemberLease::may_gain(c.previous, c.next, now) == c.may_gain);
  }
}

}  // namespace tidemark
