// Whether this process may run a table: asked by every run once it holds
// the table's lock, so that a member of a fleet that was paused, or lost
// the table while its run waited for a worker or a session, lets the lock
// go instead of running a table another member now runs. The daemon's
// answer is its fleet view's (daemon/serve/fleet_gate.h); a process alone
// owns every table (sole_owner). Implementations are safe to ask from any
// thread.
#pragma once

#include "core/run/table_key.h"

namespace tidemark {

class TableOwnership {
 public:
  virtual ~TableOwnership() = default;
  virtual bool owns(const TableKey& table) const = 0;
};

// Every table, always: a command run by hand, a daemon outside a fleet's
// decisions (tests). Lives for the whole process.
const TableOwnership& sole_owner();

}  // namespace tidemark
