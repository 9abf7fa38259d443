// Reading and writing instants as ISO-8601 text, the form every command
// prints ("2026-03-29T01:00:00Z"). Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "core/result.h"
#include "core/time_types.h"

namespace tidemark {

// Accepts 2026-03-29T01:00:00Z, 2026-03-29T03:00:00+02:00, 2026-03-29 01:00
// (seconds and a fraction optional; fractions are truncated), and a bare
// date 2026-03-29 (midnight UTC). Without Z or an offset the time is UTC.
Result<Instant> parse_instant(std::string_view text);

// "YYYY-MM-DDTHH:MM:SSZ".
std::string format_instant(Instant t);

}  // namespace tidemark
