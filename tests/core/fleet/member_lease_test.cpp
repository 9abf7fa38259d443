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

MemberLease::Renewal renewal_at(const std::string& db_now, std::vector<FleetMember> others, bool extended = true) {
  MemberLease::Renewal r = renewal(std::move(others), extended);
  r.db_now = at(db_now);
  return r;
}

FleetMember member(const std::string& id, const std::string& renewed_at, const std::string& lease_until) {
  FleetMember m = member(id, renewed_at);
  m.lease_until = at(lease_until);
  return m;
}

TEST_CASE("a member that joins fires nothing for one lease, then owns its share") {
  // Views that lack it were sent before it joined; they end within a
  // lease of that on their holders' own clocks.
  MemberLease lease("me", seconds(6));
  CHECK(lease.must_join());
  lease.joined(at("2026-01-01T00:00:00Z"));
  CHECK_FALSE(lease.must_join());
  const std::vector<std::string> all{"me", "x"};
  const TableKey mine = table_of("me", all);
  const auto x = [](const std::string& renewed) {
    return member("x", renewed, format_instant(at(renewed) + seconds(6)));
  };
  FleetView view = lease.renewed(renewal_at("2026-01-01T00:00:02Z", {x("2026-01-01T00:00:01Z")}),
                                 Steady(seconds(2)), Steady(seconds(2)));
  CHECK_FALSE(view.settled());
  CHECK_FALSE(view.owns(mine, Steady(seconds(2))));
  view = lease.renewed(renewal_at("2026-01-01T00:00:05Z", {x("2026-01-01T00:00:05Z")}), Steady(seconds(4)),
                       Steady(seconds(4)));
  CHECK_FALSE(view.settled());
  view = lease.renewed(renewal_at("2026-01-01T00:00:06Z", {x("2026-01-01T00:00:05Z")}), Steady(seconds(6)),
                       Steady(seconds(6)));
  CHECK(view.settled());
  CHECK(view.owns(mine, Steady(seconds(6))));
  CHECK_FALSE(view.owns(table_of("x", all), Steady(seconds(6))));
  CHECK(view.members() == all);
}

TEST_CASE("regression: a member alone waited a whole lease before its first firing") {
  // No live member can hold a view without it: a daemon started alone, or
  // after the others' leases ran out by the database's clock, fires at once.
  MemberLease lease("me", seconds(6));
  lease.joined(at("2026-01-01T00:00:00Z"));
  const FleetView view = lease.renewed(renewal_at("2026-01-01T00:00:00Z", {}), Steady(seconds(1)), Steady(seconds(1)));
  CHECK(view.settled());
  CHECK(view.owns({"p", "any"}, Steady(seconds(1))));
}

TEST_CASE("two members joining at once: the one that saw the other waits out its lease, the other fires at once") {
  // b's renewal ran before a's registration committed, so it saw no one;
  // a's, after b's, saw b. b's view without a was sent before a joined
  // and ends within b's lease of a's joining: a waits that long.
  MemberLease b("b", seconds(6));
  b.joined(at("2026-01-01T00:00:00Z"));
  CHECK(b.renewed(renewal_at("2026-01-01T00:00:00.100Z", {}), Steady(seconds(0)), Steady(seconds(0))).settled());
  MemberLease a("a", seconds(6));
  a.joined(at("2026-01-01T00:00:00.200Z"));
  const FleetMember seen_b = member("b", "2026-01-01T00:00:00.100Z", "2026-01-01T00:00:06.100Z");
  CHECK_FALSE(a.renewed(renewal_at("2026-01-01T00:00:00.300Z", {seen_b}), Steady(seconds(0)), Steady(seconds(0)))
                  .settled());
  CHECK_FALSE(a.renewed(renewal_at("2026-01-01T00:00:06.100Z", {seen_b}), Steady(seconds(6)), Steady(seconds(6)))
                  .settled());
  CHECK(a.renewed(renewal_at("2026-01-01T00:00:06.200Z", {seen_b}), Steady(seconds(6)), Steady(seconds(6))).settled());
}

TEST_CASE("a joining member waits for the longest lease among the members, not only its own") {
  MemberLease lease("me", seconds(6));
  lease.joined(at("2026-01-01T00:00:00Z"));
  const FleetMember slow = member("x", "2026-01-01T00:00:05Z", "2026-01-01T00:00:35Z");  // a 30 s lease
  CHECK_FALSE(lease.renewed(renewal_at("2026-01-01T00:00:29Z", {slow}), Steady(seconds(29)), Steady(seconds(29)))
                  .settled());
  CHECK(lease.renewed(renewal_at("2026-01-01T00:00:30Z", {slow}), Steady(seconds(30)), Steady(seconds(30))).settled());
}

TEST_CASE("a renewal is acted on until sent + lease - margin by the member's own clock, never later") {
  MemberLease lease("me", seconds(6));
  lease.joined(at("2026-01-01T00:00:00Z"));
  CHECK(lease.renew_every() == Steady(seconds(2)));
  const FleetView view = lease.renewed(renewal({}), Steady(seconds(100)), Steady(seconds(100)));
  // The database ends the lease no sooner than 6 s after the renewal was
  // sent; this member stops 1 s (a sixth) before.
  CHECK(view.owns({"p", "t"}, Steady(seconds(104)) + Steady(milliseconds(999))));
  CHECK(view.lapsed(Steady(seconds(105))));
  CHECK_FALSE(view.owns({"p", "t"}, Steady(seconds(105))));
  CHECK(view.picks({"p", "t"}));

  MemberLease short_lease("me", seconds(3));
  short_lease.joined(at("2026-01-01T00:00:00Z"));
  const FleetView brief = short_lease.renewed(renewal({}), Steady(seconds(100)), Steady(seconds(100)));
  CHECK_FALSE(brief.lapsed(Steady(seconds(102)) + Steady(milliseconds(499))));
  CHECK(brief.lapsed(Steady(seconds(102)) + Steady(milliseconds(500))));
}

TEST_CASE("a lease the database ended: nothing owned, join again, and wait a lease again") {
  MemberLease lease("me", seconds(6));
  lease.joined(at("2026-01-01T00:00:00Z"));
  CHECK(lease.renewed(renewal({member("x", "2026-01-01T00:00:01Z")}), Steady(seconds(1)), Steady(seconds(1))).settled());

  // Paused past its lease: x has taken its tables.
  const FleetView lost = lease.renewed(renewal({}, false), Steady(seconds(40)), Steady(seconds(40)));
  CHECK_FALSE(lost.owns({"p", "t"}, Steady(seconds(40))));
  CHECK(lost.members().empty());
  CHECK(lease.must_join());

  // x, which has its tables, must see it again before it takes any back.
  lease.joined(at("2026-01-01T00:00:41Z"));
  const FleetMember x = member("x", "2026-01-01T00:00:40Z", "2026-01-01T00:00:46Z");
  CHECK_FALSE(lease.renewed(renewal_at("2026-01-01T00:00:42Z", {x}), Steady(seconds(42)), Steady(seconds(42))).settled());
  CHECK_FALSE(lease.renewed(renewal_at("2026-01-01T00:00:45Z", {x}), Steady(seconds(45)), Steady(seconds(45))).settled());
  CHECK(lease.renewed(renewal_at("2026-01-01T00:00:47Z", {x}), Steady(seconds(47)), Steady(seconds(47))).settled());
}

TEST_CASE("regression: a renewal that commits after its lease could have ended is a lost lease") {
  // The statement began before the lease ended (so it extended it), but
  // another member may have judged the lease ended meanwhile and taken
  // the tables: the late member must join again, not fire on.
  MemberLease lease("me", seconds(6));
  lease.joined(at("2026-01-01T00:00:00Z"));
  CHECK(lease.renewed(renewal({}), Steady(seconds(10)), Steady(seconds(10))).settled());  // the lease ends at 16 s
  // Slow, but back before the lease could end: it committed in time.
  CHECK(lease.renewed(renewal({}), Steady(seconds(12)), Steady(seconds(15)) + Steady(milliseconds(850))).settled());
  CHECK_FALSE(lease.must_join());
  const FleetView late = lease.renewed(renewal({}), Steady(seconds(14)), Steady(seconds(17)) + Steady(milliseconds(950)));
  CHECK(late.members().empty());
  CHECK_FALSE(late.owns({"p", "t"}, Steady(seconds(18))));
  CHECK(lease.must_join());
  // Back in time: a slow answer still counts.
  lease.joined(at("2026-01-01T00:00:20Z"));
  CHECK(lease.renewed(renewal_at("2026-01-01T00:00:30Z", {}), Steady(seconds(30)), Steady(seconds(30))).settled());
  CHECK(lease.renewed(renewal_at("2026-01-01T00:00:32Z", {}), Steady(seconds(32)),
                      Steady(seconds(34)) + Steady(milliseconds(999)))
            .owns({"p", "t"}, Steady(seconds(35))));
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
      {"a member joined (it only takes)", two, FleetView("me", {"me", "x", "y"}, true, Steady(seconds(62))), false},
      {"one joined, another left", two, FleetView("me", {"me", "y"}, true, Steady(seconds(62))), true},
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
