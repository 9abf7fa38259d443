// Sizes in the configuration (`ranges: {above: 1GB, size: 256MB}`), in
// PostgreSQL's units: B, kB, MB, GB, TB, each 1024 of the one before, as
// pg_size_pretty and postgresql.conf count them. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"

namespace tidemark {

// "256MB" -> 268435456. A whole number, then one of the units, nothing
// between them; anything else (a fraction, "mb", a missing unit) fails
// naming what is accepted.
Result<std::int64_t> parse_byte_size(std::string_view text);

// The largest unit that writes `bytes` whole: 268435456 -> "256MB".
std::string format_byte_size(std::int64_t bytes);

}  // namespace tidemark
