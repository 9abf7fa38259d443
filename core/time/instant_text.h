// Reading and writing times as ISO-8601 text, the form every command prints
// ("2026-03-29T01:00:00Z"). Pure functions; thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"
#include "core/time/time_types.h"

namespace tidemark {

// An ISO-8601 date or date-time as written: the wall-clock fields in
// microseconds since 1970-01-01T00:00, and the offset if one was given.
struct IsoTime {
  std::int64_t wall_micros = 0;
  bool has_time = false;                     // false for a bare date
  std::optional<std::chrono::seconds> offset;  // Z is +00:00
};

// Accepts 2026-03-29, 2026-03-29T01:00, 2026-03-29 01:00:00.123456,
// with an optional Z or +hh[:mm] / -hh[:mm]. Fractions beyond microseconds
// are an error rather than silently rounded.
Result<IsoTime> parse_iso8601(std::string_view text);

// An instant: an IsoTime without an offset is taken as UTC. Sub-second
// digits are truncated to whole seconds.
Result<Instant> parse_instant(std::string_view text);

// "YYYY-MM-DDTHH:MM:SSZ".
std::string format_instant(Instant t);

// The same for seconds since the epoch (a database's extract(epoch ...)),
// rounded to the nearest second.
std::string format_unix_seconds(double unix_seconds);

}  // namespace tidemark
