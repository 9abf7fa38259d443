#include "core/sql/copy_format.h"

#include <algorithm>

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

namespace {

// The type of column `name` in `columns`; none (text) when it is not there.
CopyColumnType type_of(const std::vector<ColumnShape>& columns, const std::string& name) {
  const auto it = std::find_if(columns.begin(), columns.end(), [&](const ColumnShape& c) { return c.name == name; });
  return it == columns.end() ? CopyColumnType{} : CopyColumnType{it->type, it->portable_binary};
}

}  // namespace

CopyFormat TargetCopyTypes::format_for(const std::vector<std::string>& copied,
                                       const std::vector<ColumnShape>& source) const {
  std::vector<CopyColumnType> from_source;
  std::vector<CopyColumnType> from_target;
  for (const std::string& c : copied) {
    from_source.push_back(type_of(source, c));
    from_target.push_back(type_of(columns, c));
  }
  return choose_copy_format(from_source, from_target, same_major_version);
}

}  // namespace tidemark
