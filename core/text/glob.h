// Shell-style patterns for names on the command line (`status --table
// 'orders_*'`): `*` any run of characters, `?` one character, `\` takes
// the next character as it is. Matched here for names in memory, and
// turned into a LIKE pattern for names the state database filters. Pure
// functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace tidemark {

// Whether `name` matches `pattern` as a whole.
bool glob_matches(std::string_view pattern, std::string_view name);

// The same pattern for `LIKE ... ESCAPE '\'`: `%` and `_` in it match
// only themselves.
std::string glob_to_like(std::string_view pattern);

}  // namespace tidemark
