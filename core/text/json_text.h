// JSON string escaping, for text tidemark builds itself (log lines, keys
// sent as a JSON parameter). Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace tidemark {

// `text` as the inside of a JSON string: quotes, backslashes and control
// characters escaped, everything else (UTF-8 included) kept.
std::string json_escape(std::string_view text);

}  // namespace tidemark
