#include "core/schedule/pause_set.h"

#include <algorithm>
#include <tuple>

namespace tidemark {

std::string Pause::scope() const { return whole_pipeline() ? "pipeline " + pipeline : pipeline + "." + table; }

PauseSet::PauseSet(std::vector<Pause> pauses) : pauses_(std::move(pauses)) {
  std::sort(pauses_.begin(), pauses_.end(), [](const Pause& a, const Pause& b) {
    return std::tie(a.pipeline, a.table) < std::tie(b.pipeline, b.table);
  });
}

const Pause* PauseSet::pause_of(const TableKey& table) const {
  const auto find = [this](const std::string& pipeline, const std::string& name) -> const Pause* {
    const auto it = std::lower_bound(pauses_.begin(), pauses_.end(), std::tie(pipeline, name),
                                     [](const Pause& p, const std::tuple<const std::string&, const std::string&>& key) {
                                       return std::tie(p.pipeline, p.table) < key;
                                     });
    return it != pauses_.end() && it->pipeline == pipeline && it->table == name ? &*it : nullptr;
  };
  if (const Pause* own = find(table.pipeline, table.table)) return own;
  return find(table.pipeline, std::string());
}

bool operator==(const PauseSet& a, const PauseSet& b) {
  return std::equal(a.pauses_.begin(), a.pauses_.end(), b.pauses_.begin(), b.pauses_.end(),
                    [](const Pause& x, const Pause& y) {
                      return x.pipeline == y.pipeline && x.table == y.table && x.reason == y.reason &&
                             x.paused_by == y.paused_by && x.paused_at == y.paused_at;
                    });
}

}  // namespace tidemark
