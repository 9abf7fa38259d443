#include "core/text/glob.h"

#include <doctest/doctest.h>

namespace tidemark {
namespace {

struct GlobCase {
  const char* pattern;
  const char* name;
  bool matches;
};

constexpr GlobCase kGlobCases[] = {
    {"orders", "orders", true},
    {"orders", "orders_2026", false},
    {"orders*", "orders_2026", true},
    {"orders*", "orders", true},
    {"*_2026", "orders_2026", true},
    {"*_2026", "orders_2025", false},
    {"*", "", true},
    {"", "", true},
    {"", "a", false},
    {"?", "a", true},
    {"?", "", false},
    {"or?ers", "orders", true},
    {"a*b*c", "axxbyyc", true},
    {"a*b*c", "axxbyy", false},
    {"a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
    {"*.*", "sales.orders", true},
    {"\\*", "*", true},
    {"\\*", "x", false},
    {"100\\%", "100%", true},
    {"Orders", "orders", false},  // names are case-sensitive, as PostgreSQL quotes them
    {"b?cher", "b\xc3\xbc" "cher", true},  // ? is one character, as LIKE's _ is, not one byte
    {"b??cher", "b\xc3\xbc" "cher", false},
    {"*\xc3\xbc" "*", "b\xc3\xbc" "cher", true},
};

TEST_CASE("a glob matches a whole name: * any run, ? one UTF-8 character, \\ the next one as it is") {
  for (const GlobCase& c : kGlobCases) {
    CAPTURE(c.pattern);
    CAPTURE(c.name);
    CHECK(glob_matches(c.pattern, c.name) == c.matches);
  }
}

TEST_CASE("a glob's LIKE pattern matches % and _ only as themselves") {
  CHECK(glob_to_like("orders_*") == "orders\\_%");
  CHECK(glob_to_like("a?c") == "a_c");
  CHECK(glob_to_like("100%") == "100\\%");
  CHECK(glob_to_like("back\\\\slash") == "back\\\\slash");
  CHECK(glob_to_like("\\*") == "*");
}

}  // namespace
}  // namespace tidemark
