// Which partitions a run or a backfill writes; worked out by hand.
#include <doctest/doctest.h>

#include <string>

#include "core/time/instant_text.h"
#include "core/watermark/partition_plan.h"

namespace tidemark {
namespace {

Instant plan_at(const char* text) { return *parse_instant(text); }

std::string describe(const std::vector<TimeWindow>& windows) {
  std::string out;
  for (const auto& w : windows) out += (out.empty() ? "" : " ") + format_instant(w.lo);
  return out.empty() ? "-" : out;
}

}  // namespace

TEST_CASE("scheduled partitions: after the last done, up to the last complete, never the current one") {
  const TimeZone& berlin = *date::locate_zone("Europe/Berlin");
  struct Row {
    const char* name;
    const char* last_done_hi;  // nullptr: none
    const char* initial;       // nullptr: none
    const char* now;
    PartitionUnit unit;
    const char* expected;  // partition starts
  };
  const Row rows[] = {
      {"nothing done, no initial: only the last complete day", nullptr, nullptr, "2026-03-30T10:00:00Z",
       PartitionUnit::Day, "2026-03-28T23:00:00Z"},
      {"initial: every day from it", nullptr, "2026-03-27T23:00:00Z", "2026-03-30T10:00:00Z", PartitionUnit::Day,
       "2026-03-27T23:00:00Z 2026-03-28T23:00:00Z"},
      {"resumes after the last done", "2026-03-28T23:00:00Z", nullptr, "2026-03-31T10:00:00Z", PartitionUnit::Day,
       "2026-03-28T23:00:00Z 2026-03-29T22:00:00Z"},
      {"up to date: nothing", "2026-03-29T22:00:00Z", nullptr, "2026-03-30T21:59:59Z", PartitionUnit::Day, "-"},
      {"at local midnight the day that just ended is due", "2026-03-29T22:00:00Z", nullptr, "2026-03-30T22:00:00Z",
       PartitionUnit::Day, "2026-03-29T22:00:00Z"},
      {"hours across the spring gap", "2026-03-29T00:00:00Z", nullptr, "2026-03-29T02:30:00Z", PartitionUnit::Hour,
       "2026-03-29T00:00:00Z 2026-03-29T01:00:00Z"},
      {"months", "2026-01-31T23:00:00Z", nullptr, "2026-04-15T00:00:00Z", PartitionUnit::Month,
       "2026-01-31T23:00:00Z 2026-02-28T23:00:00Z"},
  };
  for (const Row& row : rows) {
    INFO(std::string(row.name));
    const auto last = row.last_done_hi ? std::optional<Instant>(plan_at(row.last_done_hi)) : std::nullopt;
    const auto initial = row.initial ? std::optional<Instant>(plan_at(row.initial)) : std::nullopt;
    CHECK(describe(plan_scheduled_partitions(last, initial, plan_at(row.now), row.unit, berlin)) == row.expected);
  }
}

TEST_CASE("backfill partitions start in [from, to); incomplete ones are set apart") {
  const TimeZone& berlin = *date::locate_zone("Europe/Berlin");
  const BackfillPartitions p = plan_backfill_partitions(*parse_time_in_zone("2026-10-24", berlin),
                                                        *parse_time_in_zone("2026-10-28", berlin),
                                                        plan_at("2026-10-26T12:00:00Z"), PartitionUnit::Day, berlin);
  CHECK(describe(p.complete) == "2026-10-23T22:00:00Z 2026-10-24T22:00:00Z");
  CHECK(describe(p.incomplete) == "2026-10-25T23:00:00Z 2026-10-26T23:00:00Z");
  // The 25-hour day is one partition.
  CHECK(p.complete[1].hi - p.complete[1].lo == std::chrono::hours(25));
}

TEST_CASE("counting backfill partitions stops just past the limit") {
  const TimeZone& berlin = *date::locate_zone("Europe/Berlin");
  const Instant from = *parse_time_in_zone("2026-10-24", berlin);
  const Instant to = *parse_time_in_zone("2026-10-28", berlin);
  CHECK(count_backfill_partitions(from, to, PartitionUnit::Day, berlin, 10) == 4);
  CHECK(count_backfill_partitions(from, to, PartitionUnit::Day, berlin, 4) == 4);
  CHECK(count_backfill_partitions(from, to, PartitionUnit::Day, berlin, 3) == 4);  // more than 3
  CHECK(count_backfill_partitions(from, to, PartitionUnit::Hour, berlin, 1000) == 97);  // one 25-hour day
  const Instant first = *parse_time_in_zone("0001-01-01", berlin);
  const Instant last = *parse_time_in_zone("9999-12-31", berlin);
  CHECK(count_backfill_partitions(first, last, PartitionUnit::Day, berlin, 100000) == 100001);
}

TEST_CASE("dates without an offset are local to the zone") {
  const TimeZone& ny = *date::locate_zone("America/New_York");
  CHECK(format_instant(*parse_time_in_zone("2026-01-01", ny)) == "2026-01-01T05:00:00Z");
  CHECK(format_instant(*parse_time_in_zone("2026-01-01T00:00:00Z", ny)) == "2026-01-01T00:00:00Z");
  CHECK(format_instant(*parse_time_in_zone("2026-03-08T02:30", ny)) == "2026-03-08T07:00:00Z");  // in the gap
  CHECK_FALSE(parse_time_in_zone("tomorrow", ny).ok());
}


TEST_CASE("a partition table's lookback reaches back whole local days and months, and real hours") {
  const TimeZone& berlin = *date::locate_zone("Europe/Berlin");
  struct Row {
    const char* name;
    const char* newest_complete_lo;
    std::int64_t lookback_seconds;
    PartitionUnit unit;
    const char* expected;
  };
  const Row rows[] = {
      {"3d from 2026-03-30: the 27th, though the 29th is 23 hours long", "2026-03-29T22:00:00Z", 3 * 86400,
       PartitionUnit::Day, "2026-03-26T23:00:00Z"},
      {"2d from 2026-10-27: the 25th, though it is 25 hours long", "2026-10-26T23:00:00Z", 2 * 86400,
       PartitionUnit::Day, "2026-10-24T22:00:00Z"},
      {"1d: the day before", "2026-06-09T22:00:00Z", 86400, PartitionUnit::Day, "2026-06-08T22:00:00Z"},
      {"31d from March: February 1 is before the 29th of January", "2026-02-28T23:00:00Z", 31 * 86400,
       PartitionUnit::Month, "2026-01-28T23:00:00Z"},
      {"3h across the spring gap: real hours", "2026-03-29T03:00:00Z", 3 * 3600, PartitionUnit::Hour,
       "2026-03-29T00:00:00Z"},
  };
  for (const Row& row : rows) {
    INFO(std::string(row.name));
    const Instant lo = plan_at(row.newest_complete_lo);
    const TimeWindow newest = partition_containing(lo, row.unit, berlin);
    REQUIRE(newest.lo == lo);
    CHECK(format_instant(lookback_start(newest, std::chrono::seconds(row.lookback_seconds), row.unit, berlin)) ==
          row.expected);
  }
}

}  // namespace tidemark
