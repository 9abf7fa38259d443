#include "daemon/serve/fleet_gate.h"

#include <chrono>
#include <utility>

namespace tidemark {

void FleetGate::set(FleetView view) {
  const std::lock_guard<std::mutex> lock(mutex_);
  view_ = std::move(view);
}

bool FleetGate::owns(const TableKey& table) const {
  const auto now = std::chrono::steady_clock::now().time_since_epoch();
  const std::lock_guard<std::mutex> lock(mutex_);
  return view_.owns(table, now);
}

}  // namespace tidemark
