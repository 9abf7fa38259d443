#include "core/config/config_model.h"

#include <algorithm>

namespace tidemark {
namespace {

template <class Range>
auto find_named(const Range& items, const std::string& name) -> decltype(&*items.begin()) {
  const auto it = std::find_if(items.begin(), items.end(), [&](const auto& i) { return i.name == name; });
  return it == items.end() ? nullptr : &*it;
}

}  // namespace

const ConnectionConfig* DaemonConfig::find_connection(const std::string& wanted) const {
  return find_named(connections, wanted);
}

const TableConfig* PipelineConfig::find_table(const std::string& wanted) const {
  return find_named(tables, wanted);
}

const PipelineConfig* Config::find_pipeline(const std::string& wanted) const {
  return find_named(pipelines, wanted);
}

}  // namespace tidemark
