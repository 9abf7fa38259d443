// Sets up the process-wide spdlog logger from the `log` config: level and
// text or JSON lines, on stderr (journald picks it up under systemd).
// Call once from main before other threads start.
#pragma once

#include <spdlog/formatter.h>

#include <memory>
#include <string>
#include <string_view>

#include "core/config/config_model.h"
#include "core/text/json_text.h"

namespace tidemark {

void setup_logging(const LogConfig& config);

// The formatter setup_logging gives the logger: `[time] level message`
// lines (text) or one JSON object per line. In text lines every control
// character of the message is escaped (escape_control_characters), so a
// value holding a newline cannot start a line of its own.
std::unique_ptr<spdlog::formatter> log_formatter(LogFormat format);

// Text with its control characters (below 0x20, and 0x7f) written as \n,
// \r, \t or \xHH, for text logs and one-line command output.
std::string escape_control_characters(std::string_view text);

}  // namespace tidemark
