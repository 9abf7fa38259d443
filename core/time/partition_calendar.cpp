#include "core/time/partition_calendar.h"

#include <algorithm>

#include "core/time/instant_text.h"

namespace tidemark {

Instant first_instant_of(LocalTime local, const TimeZone& zone) {
  const date::local_info info = zone.get_info(local);
  switch (info.result) {
    case date::local_info::unique:
    case date::local_info::ambiguous:
      return Instant(local.time_since_epoch()) - info.first.offset;
    case date::local_info::nonexistent:
      return info.second.begin;
  }
  return Instant(local.time_since_epoch()) - info.first.offset;
}

Result<Instant> parse_time_in_zone(std::string_view text, const TimeZone& zone) {
  const auto iso = parse_iso8601(text);
  if (!iso) return iso.failure();
  const auto wall = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::microseconds(iso->wall_micros));
  if (iso->offset) return Instant(wall) - *iso->offset;
  return first_instant_of(LocalTime(wall), zone);
}

TimeWindow partition_containing(Instant t, PartitionUnit unit, const TimeZone& zone) {
  const date::sys_info info = zone.get_info(t);
  const LocalTime local((t + info.offset).time_since_epoch());
  switch (unit) {
    case PartitionUnit::Hour: {
      // Real hours aligned to the local clock; an hour split by an offset
      // change is cut at the change, so partitions never overlap.
      const LocalTime hour = date::floor<std::chrono::hours>(local);
      const Instant lo = Instant(hour.time_since_epoch()) - info.offset;
      const Instant hi = lo + std::chrono::hours(1);
      return {std::max(lo, info.begin), std::min(hi, info.end)};
    }
    case PartitionUnit::Day: {
      const date::local_days day = date::floor<date::days>(local);
      return {first_instant_of(day, zone), first_instant_of(day + date::days(1), zone)};
    }
    case PartitionUnit::Month: {
      const date::year_month_day ymd(date::floor<date::days>(local));
      date::year_month month = ymd.year() / ymd.month();
      const date::local_days first(month / 1);
      month += date::months(1);
      return {first_instant_of(first, zone), first_instant_of(date::local_days(month / 1), zone)};
    }
  }
  return {t, t};
}

std::string partition_label(const TimeWindow& partition, PartitionUnit unit, const TimeZone& zone) {
  const auto local = zone.to_local(partition.lo);
  switch (unit) {
    case PartitionUnit::Hour: return date::format("%F %H:%M", local);
    case PartitionUnit::Day: return date::format("%F", local);
    case PartitionUnit::Month: return date::format("%Y-%m", local);
  }
  return date::format("%F", local);
}

TimeWindow next_partition(const TimeWindow& w, PartitionUnit unit, const TimeZone& zone) {
  return partition_containing(w.hi, unit, zone);
}

TimeWindow last_complete_partition(Instant t, PartitionUnit unit, const TimeZone& zone) {
  const TimeWindow current = partition_containing(t, unit, zone);
  return partition_containing(current.lo - std::chrono::seconds(1), unit, zone);
}

}  // namespace tidemark
