#include <doctest/doctest.h>

#include "core/text/sql_identifier.h"

namespace tidemark {

// Issue 10, item 6: validate showed public."We""ird; drop ..." as
// public.We"ird; drop ..., not the name that runs.
TEST_CASE("regression: names are displayed quoted wherever they do not read back unquoted") {
  struct Row {
    const char* text;
    const char* displayed;
  };
  const Row rows[] = {
      {"public.orders", "public.orders"},
      {"Public.Orders", "public.orders"},
      {"_x$1", "_x$1"},
      {"public.\"Odd Name\"", "public.\"Odd Name\""},
      {"public.\"Orders\"", "public.\"Orders\""},
      {"public.\"We\"\"ird; drop table x\"", "public.\"We\"\"ird; drop table x\""},
      {"\"a.b\"", "\"a.b\""},
      {"\"1x\"", "\"1x\""},
      {"\"é\"", "\"é\""},
  };
  for (const Row& row : rows) {
    INFO(std::string(row.text));
    const auto parsed = QualifiedName::parse(row.text);
    REQUIRE(parsed.ok());
    CHECK(parsed->display() == row.displayed);
    const auto again = QualifiedName::parse(parsed->display());
    REQUIRE(again.ok());
    CHECK(*again == *parsed);
  }
}

TEST_CASE("table names parse like PostgreSQL and quote safely") {
  struct Row {
    const char* text;
    const char* quoted;  // nullptr: rejected
  };
  const Row rows[] = {
      {"orders", "\"orders\""},
      {"public.orders", "\"public\".\"orders\""},
      {"Public.Orders", "\"public\".\"orders\""},  // unquoted names fold to lower case
      {"public.\"Odd Name\"", "\"public\".\"Odd Name\""},
      {"\"we;ird\"\"\".t", "\"we;ird\"\"\".\"t\""},
      {"_x$1", "\"_x$1\""},
      {"\"a.b\"", "\"a.b\""},
      {"", nullptr},
      {"1orders", nullptr},
      {"public.", nullptr},
      {".orders", nullptr},
      {"a.b.c", nullptr},
      {"orders;drop table x", nullptr},
      {"\"unterminated", nullptr},
      {"\"\"", nullptr},
      {"public orders", nullptr},
      {"a234567890123456789012345678901234567890123456789012345678901234", nullptr},  // 64 bytes
  };
  for (const Row& row : rows) {
    INFO(std::string(row.text));
    const auto parsed = QualifiedName::parse(row.text);
    if (row.quoted == nullptr) {
      CHECK_FALSE(parsed.ok());
    } else {
      REQUIRE(parsed.ok());
      CHECK(parsed->quoted() == row.quoted);
    }
  }
}

TEST_CASE("quote_identifier doubles embedded quotes") {
  CHECK(quote_identifier("a\"b") == "\"a\"\"b\"");
  CHECK(quote_identifier("Robert'); drop table students;--") == "\"Robert'); drop table students;--\"");
}

}  // namespace tidemark
