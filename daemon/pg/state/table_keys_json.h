// Tables as a JSON array of [pipeline, table] pairs, the one form the
// state's statements take a list of tables in (bound as one parameter and
// read with jsonb_array_elements). Pure; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "core/run/table_key.h"

namespace tidemark {

inline nlohmann::json table_keys_json(const std::vector<TableKey>& tables) {
  nlohmann::json out = nlohmann::json::array();
  for (const TableKey& t : tables) out.push_back({t.pipeline, t.table});
  return out;
}

}  // namespace tidemark
