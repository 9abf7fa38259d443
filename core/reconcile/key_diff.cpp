#include "core/reconcile/key_diff.h"

namespace tidemark {

KeyDiff diff_keys(const std::vector<KeyRow>& source, const std::vector<KeyRow>& target) {
  KeyDiff out;
  std::size_t s = 0;
  std::size_t t = 0;
  while (s < source.size() || t < target.size()) {
    if (t == target.size() || (s < source.size() && source[s] < target[t])) {
      if (source[s].flag) out.missing.push_back(source[s]);
      ++s;
    } else if (s == source.size() || target[t] < source[s]) {
      if (!target[t].flag) out.gone.push_back(target[t]);
      ++t;
    } else {
      if (source[s].flag && target[t].flag) {
        out.restored.push_back(source[s]);
      } else if (source[s].flag && source[s].hash != target[t].hash) {
        out.changed.push_back(source[s]);
      }
      ++s;
      ++t;
    }
  }
  return out;
}

}  // namespace tidemark
