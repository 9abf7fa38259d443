// Which partitions a run of a partition table writes (SPEC §3): every
// complete partition after the last one done, oldest first, up to the most
// recent complete one; never the partition still being filled. Also where
// its lookback reaches back to, and the partitions of a backfill range.
// Pure; thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <vector>

#include "core/time/partition_calendar.h"

namespace tidemark {

// `last_done_hi`: hi of the latest partition marked done, if any.
// `initial`: the first partition's instant, when configured.
// `now`: the source's clock. Without a partition done and without
// `initial`, only the most recent complete partition is returned.
std::vector<TimeWindow> plan_scheduled_partitions(std::optional<Instant> last_done_hi, std::optional<Instant> initial,
                                                  Instant now, PartitionUnit unit, const TimeZone& zone);

// Where a firing's lookback starts: the done partitions that start at or
// after it, up to the newest complete partition (included), are checked
// again. `lookback` before that partition's start, counted on the local
// calendar for days and months (3d is three local days, 23 or 25 hours
// long or not), in real time for hours.
Instant lookback_start(const TimeWindow& newest_complete, std::chrono::seconds lookback, PartitionUnit unit,
                       const TimeZone& zone);

struct BackfillPartitions {
  std::vector<TimeWindow> complete;    // to write, oldest first
  std::vector<TimeWindow> incomplete;  // not finished at `now`: skipped
};

// The partitions that start in [from, to), split by whether they are
// complete at `now`.
BackfillPartitions plan_backfill_partitions(Instant from, Instant to, Instant now, PartitionUnit unit,
                                            const TimeZone& zone);

// How many partitions start in [from, to), counting no further than
// `limit` + 1: a result above `limit` means "more than limit". Lets a
// backfill refuse a range typed wrong (0001-01-01 to 9999-12-31 is 3.65
// million days) before planning it.
std::size_t count_backfill_partitions(Instant from, Instant to, PartitionUnit unit, const TimeZone& zone,
                                      std::size_t limit);

}  // namespace tidemark
