#include "core/watermark/partition_plan.h"

namespace tidemark {

std::vector<TimeWindow> plan_scheduled_partitions(std::optional<Instant> last_done_hi, std::optional<Instant> initial,
                                                  Instant now, PartitionUnit unit, const TimeZone& zone) {
  const TimeWindow last_complete = last_complete_partition(now, unit, zone);
  TimeWindow first = last_complete;
  if (last_done_hi) {
    first = partition_containing(*last_done_hi, unit, zone);
  } else if (initial) {
    first = partition_containing(*initial, unit, zone);
  }
  std::vector<TimeWindow> out;
  for (TimeWindow w = first; w.hi <= last_complete.hi; w = next_partition(w, unit, zone)) out.push_back(w);
  return out;
}

Instant lookback_start(const TimeWindow& newest_complete, std::chrono::seconds lookback, PartitionUnit unit,
                       const TimeZone& zone) {
  if (unit == PartitionUnit::Hour) return newest_complete.lo - lookback;
  // From the local date's midnight, also where the day begins later (a
  // zone that skips midnight for summer time).
  const LocalTime day = date::floor<date::days>(zone.to_local(newest_complete.lo));
  return first_instant_of(day - lookback, zone);
}

BackfillPartitions plan_backfill_partitions(Instant from, Instant to, Instant now, PartitionUnit unit,
                                            const TimeZone& zone) {
  BackfillPartitions out;
  TimeWindow w = partition_containing(from, unit, zone);
  if (w.lo < from) w = next_partition(w, unit, zone);  // starts in [from, to) only
  for (; w.lo < to; w = next_partition(w, unit, zone)) {
    (w.hi <= now ? out.complete : out.incomplete).push_back(w);
  }
  return out;
}

std::size_t count_backfill_partitions(Instant from, Instant to, PartitionUnit unit, const TimeZone& zone,
                                      std::size_t limit) {
  std::size_t count = 0;
  TimeWindow w = partition_containing(from, unit, zone);
  if (w.lo < from) w = next_partition(w, unit, zone);
  for (; w.lo < to && count <= limit; w = next_partition(w, unit, zone)) ++count;
  return count;
}

}  // namespace tidemark
