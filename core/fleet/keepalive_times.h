// How long a server waits on a tidemark session whose client stopped
// answering (TCP keepalives: silence before the first probe, probe
// interval, probes unanswered; the user timeout and connection checks
// follow), derived from the fleet's lease. The table's lock lives on a
// session: the server ends a vanished member's sessions, and so its
// locks, within about two leases. A value type; any thread.
#pragma once

#include <chrono>

namespace tidemark {

struct KeepaliveTimes {
  std::chrono::seconds idle{};
  std::chrono::seconds interval{};
  int count = 0;

  // For a lease of at least 3 s (the configuration's bound): the first
  // probe after a lease of silence, then three a third of a lease apart.
  static KeepaliveTimes for_lease(std::chrono::seconds lease);
  // How long a peer that vanished keeps a session it left idle.
  std::chrono::seconds dead_after() const { return idle + interval * count; }
};

}  // namespace tidemark
