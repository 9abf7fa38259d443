#include <doctest/doctest.h>

#include "core/time/duration.h"

namespace tidemark {

TEST_CASE("durations") {
  struct Row {
    const char* text;
    long long seconds;  // -1: rejected
  };
  const Row rows[] = {
      {"0s", 0},        {"30s", 30},      {"15m", 900},     {"2h", 7200},         {"1d", 86400},
      {"48h", 172800},  {"3650d", 315360000}, {"3651d", -1},   {"315360001s", -1}, {"99999999999999999999s", -1},
      {"", -1},         {"s", -1},        {"5", -1},        {"-5m", -1},          {"+5m", -1},
      {"5 m", -1},      {"5M", -1},       {"1w", -1},       {"1.5h", -1},         {"1h30m", -1},
  };
  for (const Row& row : rows) {
    INFO(std::string(row.text));
    const auto parsed = parse_duration(row.text);
    if (row.seconds < 0) {
      CHECK_FALSE(parsed.ok());
    } else {
      REQUIRE(parsed.ok());
      CHECK(parsed->count() == row.seconds);
    }
  }
}

TEST_CASE("durations print in their largest exact unit") {
  CHECK(format_duration(std::chrono::seconds(0)) == "0s");
  CHECK(format_duration(std::chrono::seconds(90)) == "90s");
  CHECK(format_duration(std::chrono::seconds(120)) == "2m");
  CHECK(format_duration(std::chrono::seconds(7200)) == "2h");
  CHECK(format_duration(std::chrono::seconds(172800)) == "2d");
}

TEST_CASE("ages print rounded down to one unit, for people") {
  CHECK(format_age(0) == "0s");
  CHECK(format_age(119) == "119s");
  CHECK(format_age(120) == "2m");
  CHECK(format_age(7199) == "119m");
  CHECK(format_age(7200) == "2h");
  CHECK(format_age(2 * 86400 - 1) == "47h");
  CHECK(format_age(2 * 86400) == "2d");
  CHECK(format_age(-86400) == "-24h");
}

}  // namespace tidemark
