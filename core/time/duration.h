// Parsing and printing of the durations used in pipeline files
// ("30s", "15m", "2h", "1d"). Pure functions; thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"

namespace tidemark {

// The longest duration any key accepts: ten years keeps every sum of a
// timestamp and a duration far from overflow.
inline constexpr std::chrono::seconds kMaxDuration{3650LL * 86400};

// Parses "<digits><unit>" with unit s, m, h or d. Fails on an empty string,
// a sign, a missing or unknown unit, or a value above kMaxDuration.
Result<std::chrono::seconds> parse_duration(std::string_view text);

// The shortest exact spelling: 90s -> "90s", 7200s -> "2h", 0s -> "0s".
std::string format_duration(std::chrono::seconds d);

// An age for people, rounded down to one unit: 45s, 12m, 5h, 3d (seconds
// below 2 minutes, minutes below 2 hours, hours below 2 days); a negative
// age (ahead) keeps its sign.
std::string format_age(std::int64_t seconds);

}  // namespace tidemark
