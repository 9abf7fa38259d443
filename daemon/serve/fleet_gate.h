// What this member owns at this moment, for the workers: the scheduler's
// latest FleetView behind a mutex, so that a run asks again once it holds
// its table's lock (a run launched just before its member was paused, or
// stalled on a connection, must not start after another member took the
// table over). Owned by the Scheduler; set on the loop thread, read from
// any thread.
#pragma once

#include <mutex>

#include "core/fleet/fleet_view.h"

namespace tidemark {

class FleetGate {
 public:
  void set(FleetView view);
  // By the steady clock, now.
  bool owns(const TableKey& table) const;

 private:
  mutable std::mutex mutex_;
  FleetView view_ = FleetView::sole();
};

}  // namespace tidemark
