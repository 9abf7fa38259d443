// One member of the fleet as tidemark.members holds it: a `serve` with its
// registration and lease, every instant on the state database's clock.
// Value type; thread-safe.
#pragma once

#include <string>

#include "core/time/time_types.h"

namespace tidemark {

struct FleetMember {
  std::string member_id;
  std::string host;
  int pid = 0;
  std::string version;
  Instant started_at{};
  Instant renewed_at{};   // when its last renewal's transaction began: what it had seen by then
  Instant lease_until{};  // live while the state database's clock is before this
};

}  // namespace tidemark
