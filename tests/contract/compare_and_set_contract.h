// The compare-and-set every step's record is (UnitOfWork::record, then
// commit), as one contract: the same checks run against the fakes
// (tests/core) and against PostgreSQL (tests/integration), so the fake
// the run tests rely on behaves as the state store the daemon runs.
#pragma once

#include "core/run/run_ports.h"

namespace tidemark::contract {

// A table with no watermark yet, whose lock nobody holds, in `state`;
// `target` begins the units of work that record its steps.
struct CompareAndSetPorts {
  StateStore& state;
  Target& target;
  TableKey table;
};

// Runs the contract's doctest checks, with every move a snapshot's
// (`snapshot`) or every one a cursor's: a move from the value stored is
// written and lands on commit, its kind with it; a move from any other
// value (or from none while one is stored), or of the other kind, is not,
// and reports the value found; nothing is written once the lock is gone.
// Leaves the lock released.
void check_compare_and_set(const CompareAndSetPorts& ports, bool snapshot);

}  // namespace tidemark::contract
