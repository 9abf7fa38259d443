#include "core/sql/copy_format.h"

namespace tidemark {

CopyFormat choose_copy_format(const std::vector<CopyColumnType>& source, const std::vector<CopyColumnType>& target,
                              bool same_major_version) {
  if (!same_major_version || source.empty() || source.size() != target.size()) return CopyFormat::Text;
  for (std::size_t i = 0; i < source.size(); ++i) {
    const CopyColumnType& s = source[i];
    const CopyColumnType& t = target[i];
    if (!s.portable_binary || !t.portable_binary || s.name != t.name) return CopyFormat::Text;
  }
  return CopyFormat::Binary;
}

}  // namespace tidemark
