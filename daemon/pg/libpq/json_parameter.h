// A JSON value as the text of a bound parameter. Text that is not valid
// UTF-8 (a statement's first line cut inside a character, a name in
// another encoding) has those bytes replaced by U+FFFD instead of failing
// the statement, or throwing where no caller expects it. Pure; thread-safe.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace tidemark {

inline std::string json_parameter(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace tidemark
