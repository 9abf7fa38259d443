// The compare-and-set contract (tests/contract) against the fakes the run
// tests use; tests/integration/compare_and_set_test.cpp runs it against
// PostgreSQL.
#include <doctest/doctest.h>

#include "compare_and_set_contract.h"
#include "quiet_runs_contract.h"
#include "fake_ports.h"

namespace tidemark {

TEST_CASE("the compare-and-set contract: the fake state store") {
  for (const bool snapshot : {false, true}) {
    FakeSource source;
    FakeState state;
    FakeTarget target(source, state);
    contract::check_compare_and_set({state, target, TableKey{"p", "t"}}, snapshot);
  }
}

TEST_CASE("the quiet runs contract: the fake state store") {
  FakeSource source;
  FakeState state;
  FakeTarget target(source, state);
  contract::check_quiet_runs({state, target, TableKey{"p", "t"}});
}

}  // namespace tidemark
