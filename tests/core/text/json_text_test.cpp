// json_escape: what must be escaped inside a JSON string, and what stays.
#include <doctest/doctest.h>

#include "core/text/json_text.h"

namespace tidemark {

TEST_CASE("json_escape escapes quotes, backslashes and control characters, and keeps the rest") {
  struct Row {
    std::string text;
    std::string escaped;
  };
  const Row rows[] = {
      {"plain ü", "plain ü"},
      {"say \"hi\"", "say \\\"hi\\\""},
      {"a\\b", "a\\\\b"},
      {"l1\nl2\rl3\tend", "l1\\nl2\\rl3\\tend"},
      {std::string("\x01\x1f", 2), "\\u0001\\u001f"},
      {"", ""},
  };
  for (const Row& row : rows) {
    CAPTURE(row.text);
    CHECK(json_escape(row.text) == row.escaped);
  }
}

}  // namespace tidemark
