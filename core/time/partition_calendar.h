// Partition windows: the half-open [lo, hi) of a local hour, day or month
// in a time zone, as UTC instants. A local day is 23 or 25 hours long on a
// daylight-saving change; a local midnight that does not exist starts the
// day at the end of the gap. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "core/result.h"
#include "core/time/time_types.h"

namespace tidemark {

enum class PartitionUnit { Hour, Day, Month };

// The first and last instants a partition's bounds can take: years 1 to
// 9999, as PostgreSQL's timestamptz holds them.
inline constexpr Instant kCalendarStart{std::chrono::seconds(-62135596800LL)};
inline constexpr Instant kCalendarEnd{std::chrono::seconds(253402300799LL)};

struct TimeWindow {
  Instant lo;
  Instant hi;  // exclusive

  friend bool operator==(const TimeWindow& a, const TimeWindow& b) { return a.lo == b.lo && a.hi == b.hi; }
};

// The partition that contains t.
TimeWindow partition_containing(Instant t, PartitionUnit unit, const TimeZone& zone);

// The partition right after w (w must be a partition of the same unit and zone).
TimeWindow next_partition(const TimeWindow& w, PartitionUnit unit, const TimeZone& zone);

// The most recent partition that is complete at t: the one whose hi is at
// or before t. The partition still being filled at t is never returned.
TimeWindow last_complete_partition(Instant t, PartitionUnit unit, const TimeZone& zone);

// A partition's label for people: its local start in the zone
// (2026-03-29, 2026-03, or 2026-03-29 02:00).
std::string partition_label(const TimeWindow& partition, PartitionUnit unit, const TimeZone& zone);

// The instant a local wall-clock time first occurs; for a time inside a
// spring-forward gap, the end of the gap.
Instant first_instant_of(LocalTime local, const TimeZone& zone);

// Parses an ISO-8601 date or time; without an offset it is a wall-clock
// time in `zone` (so "2026-03-29" is that local day's first instant).
Result<Instant> parse_time_in_zone(std::string_view text, const TimeZone& zone);

}  // namespace tidemark
