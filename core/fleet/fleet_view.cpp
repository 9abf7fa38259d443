#include "core/fleet/fleet_view.h"

#include <algorithm>
#include <utility>

#include "core/fleet/table_owner.h"

namespace tidemark {

FleetView FleetView::sole() { return FleetView("", {""}, true, Steady::max()); }

FleetView FleetView::none() { return FleetView("", {}, false, Steady::min()); }

FleetView::FleetView(std::string self, std::vector<std::string> members, bool settled, Steady valid_until)
    : self_(std::move(self)), members_(std::move(members)), settled_(settled), valid_until_(valid_until) {
  std::sort(members_.begin(), members_.end());
  members_.erase(std::unique(members_.begin(), members_.end()), members_.end());
}

bool FleetView::picks(const TableKey& table) const { return settled_ && picks_once_settled(table); }

bool FleetView::picks_once_settled(const TableKey& table) const {
  if (members_.empty()) return false;
  if (members_.size() == 1) return members_[0] == self_;
  return members_[table_owner(table, members_)] == self_;
}

}  // namespace tidemark
