#include "core/diff/row_hash_stream.h"

#include <cstdlib>

namespace tidemark {

int compare_keys(const std::vector<KeyField>& a, const std::vector<KeyField>& b, const std::vector<KeyOrder>& order) {
  if (a.size() != order.size() || b.size() != order.size()) std::abort();  // a field for each key column
  for (std::size_t i = 0; i < order.size(); ++i) {
    const KeyField& x = a[i];
    const KeyField& y = b[i];
    if (x.null || y.null) {
      if (x.null != y.null) return x.null ? 1 : -1;
      continue;
    }
    if (order[i] == KeyOrder::Integer) {
      if (x.integer != y.integer) return x.integer < y.integer ? -1 : 1;
      continue;
    }
    // string_view compares its characters as unsigned char: memcmp's order.
    if (const int c = x.bytes.compare(y.bytes); c != 0) return c;
  }
  return 0;
}

}  // namespace tidemark
