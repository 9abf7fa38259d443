// Sets up the process-wide spdlog logger from the `log` config: level and
// text or JSON lines, on stderr (journald picks it up under systemd).
// Call once from main before other threads start.
#pragma once

#include "core/config_model.h"

namespace tidemark {

void setup_logging(const LogConfig& config);

// JSON string escaping for the json log format and command output.
std::string json_escape(const std::string& text);

}  // namespace tidemark
