#include "core/config/config_model.h"

#include <algorithm>

namespace tidemark {
namespace {

template <class Range>
auto find_named(const Range& items, const std::string& name) -> decltype(&*items.begin()) {
  const auto it = std::find_if(items.begin(), items.end(), [&](const auto& i) { return i.name == name; });
  return it == items.end() ? nullptr : &*it;
}

// Whether two target names may name one table: an unqualified name
// resolves through the session's search_path (public.orders, say), so it
// may be the same table as a qualified one of the same name.
bool may_be_same_table(const QualifiedName& a, const QualifiedName& b) {
  if (a.name() != b.name()) return false;
  return !a.schema() || !b.schema() || *a.schema() == *b.schema();
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

std::optional<std::string> Config::whole_target_conflict(const PipelineConfig& pipeline, const TableConfig& table,
                                                         const std::string& job) const {
  std::string others;
  for (const PipelineConfig& p : pipelines) {
    if (p.target != pipeline.target) continue;
    for (const TableConfig& t : p.tables) {
      if (&t == &table || !may_be_same_table(t.target_table, table.target_table)) continue;
      others += (others.empty() ? "" : ", ") + p.name + "." + t.name;
    }
  }
  if (others.empty()) return std::nullopt;
  return "target table " + table.target_table.display() + " is also loaded by " + others + ": " + job +
         " would delete their rows as gone from this table's source";
}

}  // namespace tidemark
