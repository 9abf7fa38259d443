// The fleet's answer to whether a run may go on once it holds its table's
// lock (daemon/serve/fleet_gate.h, core's TableOwnership): the latest view
// set on the loop thread, read by the workers.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

#include "daemon/serve/fleet_gate.h"

namespace tidemark {
namespace {

std::vector<TableKey> tables(int n) {
  std::vector<TableKey> out;
  for (int i = 0; i < n; ++i) out.push_back(TableKey{"p", "t" + std::to_string(i)});
  return out;
}

FleetView::Steady steady_now() { return std::chrono::steady_clock::now().time_since_epoch(); }

}  // namespace

TEST_CASE("outside a fleet the gate owns every table; with no view, none") {
  FleetGate gate;
  const TableOwnership& ownership = gate;
  for (const TableKey& t : tables(5)) CHECK(ownership.owns(t));
  gate.set(FleetView::none());
  for (const TableKey& t : tables(5)) CHECK_FALSE(ownership.owns(t));
}

TEST_CASE("in a fleet the gate owns what the view picks for this member, and nothing once its lease ran out") {
  const FleetView view("a", {"a", "b"}, /*settled=*/true, steady_now() + std::chrono::hours(1));
  FleetGate gate;
  gate.set(view);
  int mine = 0;
  int theirs = 0;
  for (const TableKey& t : tables(40)) {
    CHECK(gate.owns(t) == view.picks(t));
    (view.picks(t) ? mine : theirs) += 1;
  }
  // Both answers were given: rendezvous splits 40 tables between two members.
  CHECK(mine > 0);
  CHECK(theirs > 0);
  gate.set(FleetView("a", {"a", "b"}, true, steady_now() - std::chrono::seconds(1)));
  for (const TableKey& t : tables(40)) CHECK_FALSE(gate.owns(t));
}

}  // namespace tidemark
