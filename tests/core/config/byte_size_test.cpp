// Sizes in the configuration, in PostgreSQL's units, read and written.
#include "core/config/byte_size.h"

#include <doctest/doctest.h>

#include <vector>

namespace tidemark {

TEST_CASE("byte_size: a whole number and one of PostgreSQL's units, each 1024 of the one before") {
  struct Case {
    const char* text;
    std::int64_t bytes;
  };
  for (const Case& c : std::vector<Case>{{"0B", 0},
                                         {"8192B", 8192},
                                         {"8kB", 8192},
                                         {"256MB", std::int64_t{256} << 20},
                                         {"1GB", std::int64_t{1} << 30},
                                         {"2TB", std::int64_t{2} << 40}}) {
    CAPTURE(c.text);
    const auto parsed = parse_byte_size(c.text);
    REQUIRE(parsed);
    CHECK(*parsed == c.bytes);
  }
}

TEST_CASE("byte_size: anything else fails, saying what a size is") {
  for (const char* text : {"", "MB", "1", "1.5GB", "1 GB", "1gb", "1KB", "1mb", "-1MB", "1GiB", "9999999999999999TB",
                           "8388608TB"}) {
    CAPTURE(text);
    const auto parsed = parse_byte_size(text);
    REQUIRE_FALSE(parsed);
    CHECK(parsed.error().find("write a whole number and a unit, B, kB, MB, GB or TB") != std::string::npos);
  }
}

TEST_CASE("byte_size: written in the largest unit that holds it whole, read back the same") {
  struct Case {
    std::int64_t bytes;
    const char* text;
  };
  for (const Case& c : std::vector<Case>{{0, "0B"},
                                         {1000, "1000B"},
                                         {8192, "8kB"},
                                         {std::int64_t{256} << 20, "256MB"},
                                         {(std::int64_t{1} << 30) + 1024, "1048577kB"},
                                         {std::int64_t{1} << 40, "1TB"}}) {
    CAPTURE(c.text);
    CHECK(format_byte_size(c.bytes) == c.text);
    CHECK(*parse_byte_size(format_byte_size(c.bytes)) == c.bytes);
  }
}

}  // namespace tidemark
