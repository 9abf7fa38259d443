// How a batch of runs (core/run/load_batch.h) meets the state store, as one
// contract: the same checks run against the fakes (tests/core) and against
// PostgreSQL (tests/integration), so the fake the batch tests rely on
// behaves as the state store the daemon runs.
#pragma once

#include "compare_and_set_contract.h"

namespace tidemark::contract {

// With a table that has no watermark yet and whose lock nobody holds:
// the batch's lock is taken and released as a run's; its read finds what
// open_run finds, writing nothing; a quiet run is written only from the
// watermark stored and while the lock is held, and marks the run rows
// the lock proves abandoned. Leaves the lock released.
void check_quiet_runs(const CompareAndSetPorts& ports);

}  // namespace tidemark::contract
