// The system's wall clock, in whole seconds, as the schedules read it.
// Stateless; thread-safe.
#pragma once

#include <chrono>

#include "core/schedule/scheduler_ports.h"

namespace tidemark {

class WallClock final : public Clock {
 public:
  Instant now() const override { return date::floor<std::chrono::seconds>(std::chrono::system_clock::now()); }
  std::chrono::steady_clock::duration monotonic() const override {
    return std::chrono::steady_clock::now().time_since_epoch();
  }
};

}  // namespace tidemark
