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

CopyFormat TargetCopyTypes::format_for(const std::vector<std::string>& columns,
                                       const std::vector<CopyColumnType>& source) const {
  std::vector<CopyColumnType> target;
  for (const std::string& c : columns) {
    const auto it = by_column.find(c);
    target.push_back(it == by_column.end() ? CopyColumnType{} : it->second);
  }
  return choose_copy_format(source, target, same_major_version);
}

}  // namespace tidemark
