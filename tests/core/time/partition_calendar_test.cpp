// Partition windows, worked out by hand from the zones' transitions
// (checked with zdump).
#include <doctest/doctest.h>

#include <string>

#include "core/time/instant_text.h"
#include "core/time/partition_calendar.h"

namespace tidemark {
namespace {

Instant instant_at(const char* text) { return *parse_instant(text); }

struct WindowCase {
  const char* zone;
  PartitionUnit unit;
  const char* t;
  const char* lo;
  const char* hi;
};

const WindowCase kContaining[] = {
    {"UTC", PartitionUnit::Day, "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"},
    {"UTC", PartitionUnit::Day, "2026-01-01T23:59:59Z", "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"},
    {"UTC", PartitionUnit::Hour, "2026-01-01T10:30:00Z", "2026-01-01T10:00:00Z", "2026-01-01T11:00:00Z"},
    {"UTC", PartitionUnit::Month, "2028-02-15T00:00:00Z", "2028-02-01T00:00:00Z", "2028-03-01T00:00:00Z"},
    {"UTC", PartitionUnit::Month, "2026-12-31T23:59:59Z", "2026-12-01T00:00:00Z", "2027-01-01T00:00:00Z"},
    // Europe/Berlin: 23-hour day 2026-03-29, 25-hour day 2026-10-25.
    {"Europe/Berlin", PartitionUnit::Day, "2026-03-29T12:00:00Z", "2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z"},
    {"Europe/Berlin", PartitionUnit::Day, "2026-10-25T12:00:00Z", "2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z"},
    {"Europe/Berlin", PartitionUnit::Day, "2026-10-24T22:00:00Z", "2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z"},
    {"Europe/Berlin", PartitionUnit::Day, "2026-10-24T21:59:59Z", "2026-10-23T22:00:00Z", "2026-10-24T22:00:00Z"},
    {"Europe/Berlin", PartitionUnit::Month, "2026-03-15T00:00:00Z", "2026-02-28T23:00:00Z", "2026-03-31T22:00:00Z"},
    {"Europe/Berlin", PartitionUnit::Month, "2026-10-31T23:30:00Z", "2026-10-31T23:00:00Z", "2026-11-30T23:00:00Z"},
    // Berlin hours around the changes: the repeated 02:00 hour is two partitions.
    {"Europe/Berlin", PartitionUnit::Hour, "2026-03-29T00:30:00Z", "2026-03-29T00:00:00Z", "2026-03-29T01:00:00Z"},
    {"Europe/Berlin", PartitionUnit::Hour, "2026-03-29T01:30:00Z", "2026-03-29T01:00:00Z", "2026-03-29T02:00:00Z"},
    {"Europe/Berlin", PartitionUnit::Hour, "2026-10-25T00:30:00Z", "2026-10-25T00:00:00Z", "2026-10-25T01:00:00Z"},
    {"Europe/Berlin", PartitionUnit::Hour, "2026-10-25T01:30:00Z", "2026-10-25T01:00:00Z", "2026-10-25T02:00:00Z"},
    // America/Santiago changes at midnight: 2026-09-06 starts at 01:00 local.
    {"America/Santiago", PartitionUnit::Day, "2026-09-06T12:00:00Z", "2026-09-06T04:00:00Z", "2026-09-07T03:00:00Z"},
    {"America/Santiago", PartitionUnit::Day, "2026-09-05T12:00:00Z", "2026-09-05T04:00:00Z", "2026-09-06T04:00:00Z"},
    {"America/Santiago", PartitionUnit::Day, "2026-04-04T12:00:00Z", "2026-04-04T03:00:00Z", "2026-04-05T04:00:00Z"},
    // Offsets that are not whole hours.
    {"Asia/Kolkata", PartitionUnit::Day, "2026-01-01T00:00:00Z", "2025-12-31T18:30:00Z", "2026-01-01T18:30:00Z"},
    {"Asia/Kathmandu", PartitionUnit::Hour, "2026-01-01T00:00:00Z", "2025-12-31T23:15:00Z", "2026-01-01T00:15:00Z"},
    // Australia/Lord_Howe springs forward 30 minutes at 2026-10-03T15:30Z
    // (02:00 -> 02:30 local): the local 02:00 hour is 30 real minutes.
    {"Australia/Lord_Howe", PartitionUnit::Hour, "2026-10-03T15:40:00Z", "2026-10-03T15:30:00Z", "2026-10-03T16:00:00Z"},
    {"Australia/Lord_Howe", PartitionUnit::Hour, "2026-10-03T15:10:00Z", "2026-10-03T14:30:00Z", "2026-10-03T15:30:00Z"},
};

}  // namespace

TEST_CASE("the partition containing an instant") {
  for (const WindowCase& c : kContaining) {
    INFO((std::string(c.zone) + " " + c.t));
    const TimeWindow w = partition_containing(instant_at(c.t), c.unit, *date::locate_zone(c.zone));
    CHECK(format_instant(w.lo) == c.lo);
    CHECK(format_instant(w.hi) == c.hi);
  }
}

TEST_CASE("the last complete partition never includes the one being filled") {
  const TimeZone& berlin = *date::locate_zone("Europe/Berlin");
  // 2026-03-30 10:00 local: the last complete day is the 23-hour 2026-03-29.
  TimeWindow w = last_complete_partition(instant_at("2026-03-30T08:00:00Z"), PartitionUnit::Day, berlin);
  CHECK(format_instant(w.lo) == "2026-03-28T23:00:00Z");
  CHECK(format_instant(w.hi) == "2026-03-29T22:00:00Z");
  // Exactly at midnight the day that just ended is complete.
  w = last_complete_partition(instant_at("2026-03-29T22:00:00Z"), PartitionUnit::Day, berlin);
  CHECK(format_instant(w.hi) == "2026-03-29T22:00:00Z");
  // One second before midnight it is not.
  w = last_complete_partition(instant_at("2026-03-29T21:59:59Z"), PartitionUnit::Day, berlin);
  CHECK(format_instant(w.hi) == "2026-03-28T23:00:00Z");
  w = last_complete_partition(instant_at("2026-11-01T00:00:00Z"), PartitionUnit::Month, berlin);
  CHECK(format_instant(w.lo) == "2026-09-30T22:00:00Z");
  CHECK(format_instant(w.hi) == "2026-10-31T23:00:00Z");
}

TEST_CASE("consecutive partitions tile time without gaps or overlaps") {
  for (const char* zone_name : {"Europe/Berlin", "America/Santiago", "Australia/Lord_Howe", "Asia/Kathmandu"}) {
    const TimeZone& zone = *date::locate_zone(zone_name);
    for (PartitionUnit unit : {PartitionUnit::Hour, PartitionUnit::Day, PartitionUnit::Month}) {
      INFO((std::string(zone_name) + " unit " + std::to_string(static_cast<int>(unit))));
      // From local 2026-01-01 00:00 to local 2027-01-01 00:00.
      const Instant start = first_instant_of(date::local_days(date::year(2026) / 1 / 1), zone);
      const Instant end = first_instant_of(date::local_days(date::year(2027) / 1 / 1), zone);
      TimeWindow w = partition_containing(start, unit, zone);
      REQUIRE(w.lo == start);
      int count = 0;
      while (w.lo < end) {
        const TimeWindow next = next_partition(w, unit, zone);
        REQUIRE(w.lo < w.hi);
        REQUIRE(next.lo == w.hi);
        w = next;
        ++count;
      }
      if (unit == PartitionUnit::Month) CHECK(count == 12);
      if (unit == PartitionUnit::Day) CHECK(count == 365);
    }
  }
}

}  // namespace tidemark
