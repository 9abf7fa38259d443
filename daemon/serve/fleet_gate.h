// What this member owns at this moment, for the workers' runs (core's
// TableOwnership, asked once a run holds its table's lock): the
// scheduler's latest FleetView behind a mutex. Owned by the Scheduler;
// set on the loop thread, read from any thread.
#pragma once

#include <mutex>

#include "core/fleet/fleet_view.h"
#include "core/run/table_ownership.h"

namespace tidemark {

class FleetGate final : public TableOwnership {
 public:
  void set(FleetView view);
  // By the steady clock, now.
  bool owns(const TableKey& table) const override;

 private:
  mutable std::mutex mutex_;
  FleetView view_ = FleetView::sole();
};

}  // namespace tidemark
