// A run lock's bigint advisory key as its two 32-bit halves: as pg_locks
// shows the lock (classid, objid), and as the two-int lock a run's range
// helpers hold shared on the target while they write (PgRangeCrew), which
// a later run of the table waits for. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>

namespace tidemark {

struct RunLockHalves {
  std::uint32_t high = 0;
  std::uint32_t low = 0;

  explicit RunLockHalves(std::int64_t key)
      : high(static_cast<std::uint32_t>(static_cast<std::uint64_t>(key) >> 32)),
        low(static_cast<std::uint32_t>(static_cast<std::uint64_t>(key))) {}

  // The arguments of pg_advisory_xact_lock(int4, int4) and its kin, made
  // of digits: the same bits as signed integers.
  std::string int4_pair() const {
    return std::to_string(static_cast<std::int32_t>(high)) + ", " + std::to_string(static_cast<std::int32_t>(low));
  }
};

}  // namespace tidemark
