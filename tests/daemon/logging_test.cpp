// The log formatters: a text line is one line whatever the message holds.
#include <doctest/doctest.h>

#include <spdlog/logger.h>
#include <spdlog/sinks/ostream_sink.h>

#include <algorithm>
#include <sstream>

#include "daemon/logging.h"

namespace tidemark {
namespace {

std::string logged(LogFormat format, const std::string& message) {
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_st>(out);
  spdlog::logger logger("test", sink);
  logger.set_formatter(log_formatter(format));
  logger.error("{}", message);
  return out.str();
}

}  // namespace

TEST_CASE("control characters are escaped, everything else is kept") {
  CHECK(escape_control_characters("plain ü 'q' \\ done") == "plain ü 'q' \\ done");
  CHECK(escape_control_characters("a\nb\rc\td") == "a\\nb\\rc\\td");
  CHECK(escape_control_characters(std::string("\x1b[31mred\x7f\0", 10)) == "\\x1b[31mred\\x7f\\x00");
}

// Issue 10, item 5: an identifier holding a newline started a new,
// genuine-looking line in text logs.
TEST_CASE("regression: a message holding a newline is one text log line") {
  const std::string forged = "table \"x\n2026-01-01T00:00:00.000Z info  shop.orders: success\" failed";
  const std::string line = logged(LogFormat::Text, forged);
  CHECK(std::count(line.begin(), line.end(), '\n') == 1);
  CHECK(line.find("error table \"x\\n2026-01-01T00:00:00.000Z info  shop.orders: success\" failed\n") !=
        std::string::npos);
  const std::string json = logged(LogFormat::Json, forged);
  CHECK(std::count(json.begin(), json.end(), '\n') == 1);
  CHECK(json.find(R"("level":"error","message":"table \"x\n2026)") != std::string::npos);
}

}  // namespace tidemark
