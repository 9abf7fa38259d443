#include "core/fleet/keepalive_times.h"

#include <algorithm>

namespace tidemark {

KeepaliveTimes KeepaliveTimes::for_lease(std::chrono::seconds lease) {
  // The other members take a vanished member's tables one lease after its
  // last renewal; its locks go one lease later at most. Probes answered by
  // a live peer's kernel cost nothing and never end a busy session.
  KeepaliveTimes t;
  t.idle = lease;
  t.interval = std::max(lease / 3, std::chrono::seconds(1));
  t.count = 3;
  return t;
}

}  // namespace tidemark
