// One member of the fleet as tidemark.members holds it: a `serve` with its
// registration and lease, every instant on the state database's clock.
// Value type; thread-safe.
#pragma once

#include <chrono>
#include <string>

namespace tidemark {

// The state database's clock, to its microsecond: one renewal must be
// told apart from the join it follows.
using DbInstant = std::chrono::time_point<std::chrono::system_clock, std::chrono::microseconds>;

struct FleetMember {
  std::string member_id;
  std::string host;
  int pid = 0;
  std::string version;
  DbInstant started_at{};
  DbInstant renewed_at{};   // when its last renewal's transaction began: what it had seen by then
  DbInstant lease_until{};  // live while the state database's clock is before this
};

}  // namespace tidemark
