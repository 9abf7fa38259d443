// Table-driven tests of the cron engine. Every expected instant was worked
// out by hand from the cron rules and the zones' transitions (checked with
// zdump), never by running the code under test.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/time/cron_schedule.h"
#include "core/time/instant_text.h"

namespace tidemark {
namespace {

struct NextCase {
  const char* expression;
  const char* zone;
  const char* from;
  std::vector<const char*> expected;  // successive firings after `from`
};

Instant at(const char* text) {
  const auto parsed = parse_instant(text);
  REQUIRE(parsed.ok());
  return *parsed;
}

// 2026-01-01 is a Thursday.
const NextCase kSyntax[] = {
    {"* * * * *", "UTC", "2026-01-01T00:00:00Z", {"2026-01-01T00:01:00Z", "2026-01-01T00:02:00Z"}},
    {"0 * * * *", "UTC", "2026-01-01T00:00:00Z", {"2026-01-01T01:00:00Z"}},
    {"*/15 * * * *", "UTC", "2026-01-01T00:00:00Z", {"2026-01-01T00:15:00Z", "2026-01-01T00:30:00Z", "2026-01-01T00:45:00Z", "2026-01-01T01:00:00Z"}},
    {"5 * * * *", "UTC", "2026-01-01T00:00:00Z", {"2026-01-01T00:05:00Z", "2026-01-01T01:05:00Z"}},
    {"1-30/5 * * * *", "UTC", "2026-01-01T00:00:00Z", {"2026-01-01T00:01:00Z", "2026-01-01T00:06:00Z"}},
    {"1-30/5 * * * *", "UTC", "2026-01-01T00:26:00Z", {"2026-01-01T01:01:00Z"}},
    {"0,30 * * * *", "UTC", "2026-01-01T00:00:00Z", {"2026-01-01T00:30:00Z", "2026-01-01T01:00:00Z"}},
    {"15,45 9-17 * * *", "UTC", "2026-01-01T00:00:00Z", {"2026-01-01T09:15:00Z", "2026-01-01T09:45:00Z", "2026-01-01T10:15:00Z"}},
    {"15,45 9-17 * * *", "UTC", "2026-01-01T17:45:00Z", {"2026-01-02T09:15:00Z"}},
    {"0 9-17/2 * * *", "UTC", "2026-01-01T10:00:00Z", {"2026-01-01T11:00:00Z", "2026-01-01T13:00:00Z"}},
    {"0 9-17/2 * * *", "UTC", "2026-01-01T17:00:00Z", {"2026-01-02T09:00:00Z"}},
    {"0 0 * * *", "UTC", "2026-01-01T00:00:00Z", {"2026-01-02T00:00:00Z"}},
    {"0 0 * * *", "UTC", "2025-12-31T23:59:59Z", {"2026-01-01T00:00:00Z"}},
    {"@daily", "UTC", "2026-01-01T00:00:00Z", {"2026-01-02T00:00:00Z"}},
    {"@midnight", "UTC", "2026-01-01T00:00:00Z", {"2026-01-02T00:00:00Z"}},
    {"@hourly", "UTC", "2026-01-01T00:00:00Z", {"2026-01-01T01:00:00Z"}},
    {"@weekly", "UTC", "2026-01-01T00:00:00Z", {"2026-01-04T00:00:00Z", "2026-01-11T00:00:00Z"}},
    {"@monthly", "UTC", "2026-01-01T00:00:00Z", {"2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z"}},
    {"@yearly", "UTC", "2026-01-01T00:00:00Z", {"2027-01-01T00:00:00Z"}},
    {"@annually", "UTC", "2026-01-01T00:00:00Z", {"2027-01-01T00:00:00Z"}},
    {"@DAILY", "UTC", "2026-01-01T00:00:00Z", {"2026-01-02T00:00:00Z"}},
    {"0 12 * * mon", "UTC", "2026-01-01T00:00:00Z", {"2026-01-05T12:00:00Z", "2026-01-12T12:00:00Z"}},
    {"0 12 * * MON", "UTC", "2026-01-01T00:00:00Z", {"2026-01-05T12:00:00Z"}},
    {"0 12 * * 1", "UTC", "2026-01-01T00:00:00Z", {"2026-01-05T12:00:00Z"}},
    {"0 12 * * mon-fri", "UTC", "2026-01-01T12:00:00Z", {"2026-01-02T12:00:00Z", "2026-01-05T12:00:00Z"}},
    {"0 12 * * sat,sun", "UTC", "2026-01-01T00:00:00Z", {"2026-01-03T12:00:00Z", "2026-01-04T12:00:00Z", "2026-01-10T12:00:00Z"}},
    {"0 12 * * 0", "UTC", "2026-01-01T00:00:00Z", {"2026-01-04T12:00:00Z"}},
    {"0 12 * * 7", "UTC", "2026-01-01T00:00:00Z", {"2026-01-04T12:00:00Z"}},
    {"0 12 * * 5-7", "UTC", "2026-01-03T12:00:00Z", {"2026-01-04T12:00:00Z", "2026-01-09T12:00:00Z"}},
    {"0 0 1 jan *", "UTC", "2026-01-01T00:00:00Z", {"2027-01-01T00:00:00Z"}},
    {"0 0 1 JUL *", "UTC", "2026-01-01T00:00:00Z", {"2026-07-01T00:00:00Z"}},
    {"0 0 * jun-aug *", "UTC", "2026-01-01T00:00:00Z", {"2026-06-01T00:00:00Z"}},
    {"0 0 * jun-aug *", "UTC", "2026-08-31T00:00:00Z", {"2027-06-01T00:00:00Z"}},
    {"0 0 15 */3 *", "UTC", "2026-01-01T00:00:00Z", {"2026-01-15T00:00:00Z", "2026-04-15T00:00:00Z", "2026-07-15T00:00:00Z", "2026-10-15T00:00:00Z", "2027-01-15T00:00:00Z"}},
    {"0 0 31 * *", "UTC", "2026-01-31T00:00:00Z", {"2026-03-31T00:00:00Z", "2026-05-31T00:00:00Z", "2026-07-31T00:00:00Z", "2026-08-31T00:00:00Z"}},
    {"0 0 29 2 *", "UTC", "2026-01-01T00:00:00Z", {"2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z"}},
    {"0 0 29 2 *", "UTC", "2096-03-01T00:00:00Z", {"2104-02-29T00:00:00Z"}},  // 2100 is not a leap year
    {"0 0 28-31 * *", "UTC", "2026-02-27T00:00:00Z", {"2026-02-28T00:00:00Z", "2026-03-28T00:00:00Z"}},
    {"0 0 1 3 *", "UTC", "2028-02-28T12:00:00Z", {"2028-03-01T00:00:00Z"}},
    {"0 12 29 * *", "UTC", "2027-02-01T00:00:00Z", {"2027-03-29T12:00:00Z"}},
    {"0 12 29 * *", "UTC", "2028-02-01T00:00:00Z", {"2028-02-29T12:00:00Z"}},
    {"0 0 30 4,6,9,11 *", "UTC", "2026-01-01T00:00:00Z", {"2026-04-30T00:00:00Z", "2026-06-30T00:00:00Z"}},
    {"0 0 31 4,6,9,11,12 *", "UTC", "2026-01-01T00:00:00Z", {"2026-12-31T00:00:00Z"}},
    // Vixie: both day fields restricted, so either may match.
    {"0 0 13 * fri", "UTC", "2026-01-01T00:00:00Z", {"2026-01-02T00:00:00Z", "2026-01-09T00:00:00Z", "2026-01-13T00:00:00Z", "2026-01-16T00:00:00Z"}},
    {"0 0 1 * mon", "UTC", "2026-01-01T00:00:00Z", {"2026-01-05T00:00:00Z"}},
    // A day field starting with * does not restrict: both must match.
    {"0 0 * * fri", "UTC", "2026-01-01T00:00:00Z", {"2026-01-02T00:00:00Z"}},
    {"0 0 */2 * fri", "UTC", "2026-01-01T00:00:00Z", {"2026-01-09T00:00:00Z", "2026-01-23T00:00:00Z", "2026-02-13T00:00:00Z"}},  // odd days that are Fridays
    // Seconds field.
    {"*/10 * * * * *", "UTC", "2026-01-01T00:00:00Z", {"2026-01-01T00:00:10Z", "2026-01-01T00:00:20Z"}},
    {"30 0 * * * *", "UTC", "2026-01-01T00:00:00Z", {"2026-01-01T00:00:30Z", "2026-01-01T01:00:30Z"}},
    {"0 0 0 * * *", "UTC", "2026-01-01T00:00:00Z", {"2026-01-02T00:00:00Z"}},
    {"15,45 * * * * *", "UTC", "2026-01-01T00:00:45Z", {"2026-01-01T00:01:15Z"}},
    {"0-59/20 */2 * * * *", "UTC", "2026-01-01T00:00:40Z", {"2026-01-01T00:02:00Z"}},
    {"59 59 23 31 12 *", "UTC", "2026-01-01T00:00:00Z", {"2026-12-31T23:59:59Z"}},
    // Year ends.
    {"0 0 1 1 *", "UTC", "2026-12-31T23:59:59Z", {"2027-01-01T00:00:00Z"}},
    {"59 23 31 12 *", "UTC", "2026-12-31T23:59:00Z", {"2027-12-31T23:59:00Z"}},
    {"* * * * *", "UTC", "2026-12-31T23:59:00Z", {"2027-01-01T00:00:00Z"}},
    {"0 0 * * sun", "UTC", "2026-12-30T00:00:00Z", {"2027-01-03T00:00:00Z"}},
    // Strictly after: a `from` that is itself a firing is not returned.
    {"0 12 * * *", "UTC", "2026-01-01T12:00:00Z", {"2026-01-02T12:00:00Z"}},
    {"0 12 * * *", "UTC", "2026-01-01T11:59:59Z", {"2026-01-01T12:00:00Z"}},
    {"  0   12  *  *  *  ", "UTC", "2026-01-01T00:00:00Z", {"2026-01-01T12:00:00Z"}},
};

const NextCase kZones[] = {
    // Europe/Berlin, spring forward 2026-03-29 01:00Z: local 02:00-02:59 does not exist.
    {"30 2 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z", {"2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"}},
    {"0 2 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z", {"2026-03-29T01:00:00Z", "2026-03-30T00:00:00Z"}},
    {"59 1 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z", {"2026-03-29T00:59:00Z", "2026-03-29T23:59:00Z"}},
    {"0 3 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z", {"2026-03-29T01:00:00Z", "2026-03-30T01:00:00Z"}},
    {"0 2,3 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z", {"2026-03-29T01:00:00Z", "2026-03-30T00:00:00Z", "2026-03-30T01:00:00Z"}},
    {"*/15 2 * * *", "Europe/Berlin", "2026-03-28T23:00:00Z", {"2026-03-29T01:00:00Z", "2026-03-30T00:00:00Z"}},
    {"30 * * * *", "Europe/Berlin", "2026-03-28T23:00:00Z", {"2026-03-28T23:30:00Z", "2026-03-29T00:30:00Z", "2026-03-29T01:30:00Z", "2026-03-29T02:30:00Z"}},
    {"*/30 * * * *", "Europe/Berlin", "2026-03-29T00:30:00Z", {"2026-03-29T01:00:00Z", "2026-03-29T01:30:00Z"}},
    {"0 * * * *", "Europe/Berlin", "2026-03-29T00:00:00Z", {"2026-03-29T01:00:00Z", "2026-03-29T02:00:00Z"}},
    {"0 30 * * * *", "Europe/Berlin", "2026-03-29T00:30:00Z", {"2026-03-29T01:30:00Z"}},
    {"30 2 * * *", "Europe/Berlin", "2026-03-29T00:59:59Z", {"2026-03-29T01:00:00Z"}},
    {"0 0 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z", {"2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z"}},
    // Europe/Berlin, fall back 2026-10-25 01:00Z: local 02:00-02:59 happens twice.
    {"30 2 * * *", "Europe/Berlin", "2026-10-24T12:00:00Z", {"2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"}},
    {"0 2 * * *", "Europe/Berlin", "2026-10-24T12:00:00Z", {"2026-10-25T00:00:00Z", "2026-10-26T01:00:00Z"}},
    {"0 3 * * *", "Europe/Berlin", "2026-10-24T12:00:00Z", {"2026-10-25T02:00:00Z"}},
    {"59 1 * * *", "Europe/Berlin", "2026-10-24T12:00:00Z", {"2026-10-24T23:59:00Z"}},
    {"30 * * * *", "Europe/Berlin", "2026-10-24T23:00:00Z", {"2026-10-24T23:30:00Z", "2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z", "2026-10-25T02:30:00Z"}},
    {"0 * * * *", "Europe/Berlin", "2026-10-25T00:00:00Z", {"2026-10-25T01:00:00Z", "2026-10-25T02:00:00Z"}},
    {"*/20 2 * * *", "Europe/Berlin", "2026-10-24T23:59:00Z", {"2026-10-25T00:00:00Z", "2026-10-25T00:20:00Z", "2026-10-25T00:40:00Z", "2026-10-26T01:00:00Z"}},
    {"45 2 * * *", "Europe/Berlin", "2026-10-25T01:10:00Z", {"2026-10-26T01:45:00Z"}},
    // America/New_York: spring forward 2026-03-08 07:00Z, fall back 2026-11-01 06:00Z.
    {"30 2 * * *", "America/New_York", "2026-03-07T12:00:00Z", {"2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z"}},
    {"0 1 * * *", "America/New_York", "2026-03-07T12:00:00Z", {"2026-03-08T06:00:00Z", "2026-03-09T05:00:00Z"}},
    {"0 3 * * *", "America/New_York", "2026-03-07T12:00:00Z", {"2026-03-08T07:00:00Z"}},
    {"30 * * * *", "America/New_York", "2026-03-08T06:00:00Z", {"2026-03-08T06:30:00Z", "2026-03-08T07:30:00Z"}},
    {"0 0 * * *", "America/New_York", "2026-03-07T12:00:00Z", {"2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z"}},
    {"30 1 * * *", "America/New_York", "2026-10-31T12:00:00Z", {"2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"}},
    {"30 * * * *", "America/New_York", "2026-11-01T04:00:00Z", {"2026-11-01T04:30:00Z", "2026-11-01T05:30:00Z", "2026-11-01T06:30:00Z", "2026-11-01T07:30:00Z"}},
    {"0 2 * * *", "America/New_York", "2026-10-31T12:00:00Z", {"2026-11-01T07:00:00Z"}},
    {"0 1 * * *", "America/New_York", "2026-11-01T05:00:00Z", {"2026-11-02T06:00:00Z"}},
    {"0 9 * * mon-fri", "America/New_York", "2026-03-06T15:00:00Z", {"2026-03-09T13:00:00Z"}},
    // Australia/Sydney: DST ends 2026-04-04 16:00Z (02:00-02:59 twice), starts 2026-10-03 16:00Z (gap).
    {"30 2 * * *", "Australia/Sydney", "2026-04-04T00:00:00Z", {"2026-04-04T15:30:00Z", "2026-04-05T16:30:00Z"}},
    {"30 * * * *", "Australia/Sydney", "2026-04-04T15:00:00Z", {"2026-04-04T15:30:00Z", "2026-04-04T16:30:00Z", "2026-04-04T17:30:00Z"}},
    {"30 2 * * *", "Australia/Sydney", "2026-10-03T00:00:00Z", {"2026-10-03T16:00:00Z", "2026-10-04T15:30:00Z"}},
    {"0 9 * * *", "Australia/Sydney", "2026-10-03T00:00:00Z", {"2026-10-03T22:00:00Z"}},
    {"15 * * * *", "Australia/Sydney", "2026-10-03T15:00:00Z", {"2026-10-03T15:15:00Z", "2026-10-03T16:15:00Z"}},
    // Offsets that are not whole hours.
    {"0 9 * * *", "Asia/Kolkata", "2026-01-01T00:00:00Z", {"2026-01-01T03:30:00Z"}},
    {"0 * * * *", "Asia/Kolkata", "2026-01-01T00:00:00Z", {"2026-01-01T00:30:00Z", "2026-01-01T01:30:00Z"}},
    {"0 0 * * *", "Asia/Kathmandu", "2026-01-01T00:00:00Z", {"2026-01-01T18:15:00Z"}},
    {"0 12 * * *", "Australia/Adelaide", "2026-01-01T00:00:00Z", {"2026-01-01T01:30:00Z"}},
    {"30 2 * * *", "Australia/Adelaide", "2026-10-03T00:00:00Z", {"2026-10-03T16:30:00Z", "2026-10-04T16:00:00Z"}},
    // Australia/Lord_Howe moves by 30 minutes: gap 02:00-02:29 on 2026-10-04,
    // 01:30-01:59 twice on 2026-04-05.
    {"15 2 * * *", "Australia/Lord_Howe", "2026-10-03T00:00:00Z", {"2026-10-03T15:30:00Z"}},
    {"45 2 * * *", "Australia/Lord_Howe", "2026-10-03T00:00:00Z", {"2026-10-03T15:45:00Z"}},
    {"15 * * * *", "Australia/Lord_Howe", "2026-10-03T15:00:00Z", {"2026-10-03T16:15:00Z"}},
    {"45 1 * * *", "Australia/Lord_Howe", "2026-04-04T00:00:00Z", {"2026-04-04T14:45:00Z", "2026-04-05T15:15:00Z"}},
    {"45 * * * *", "Australia/Lord_Howe", "2026-04-04T14:00:00Z", {"2026-04-04T14:45:00Z", "2026-04-04T15:15:00Z", "2026-04-04T16:15:00Z"}},
};

void check_next(const NextCase& c) {
  INFO((std::string(c.expression) + " in " + c.zone + " after " + c.from));
  const auto schedule = CronSchedule::parse(c.expression);
  REQUIRE_MESSAGE(schedule.ok(), (schedule.ok() ? "" : schedule.error()));
  const TimeZone* zone = date::locate_zone(c.zone);
  Instant from = at(c.from);
  for (const char* expected : c.expected) {
    const auto next = schedule->next_after(from, *zone);
    REQUIRE(next.has_value());
    CHECK(format_instant(*next) == expected);
    from = *next;
  }
}

}  // namespace

TEST_CASE("cron syntax: next firings in UTC") {
  for (const NextCase& c : kSyntax) check_next(c);
}

TEST_CASE("cron in time zones: daylight-saving gaps and overlaps, odd offsets") {
  for (const NextCase& c : kZones) check_next(c);
}

TEST_CASE("cron parse errors name the field and what is allowed") {
  struct Row {
    const char* expression;
    const char* message;  // a fragment
  };
  const Row rows[] = {
      {"", "expected 5 fields"},
      {"* * * *", "got 4"},
      {"* * * * * * *", "got 7"},
      {"60 * * * *", "minute field \"60\": 60 is out of range"},
      {"* 24 * * *", "hour field \"24\": 24 is out of range"},
      {"* * 0 * *", "day-of-month field \"0\""},
      {"* * 32 * *", "day-of-month field \"32\""},
      {"* * * 13 *", "month field \"13\""},
      {"* * * 0 *", "month field \"0\""},
      {"* * * * 8", "day-of-week field \"8\""},
      {"* * * * foo", "day-of-week field \"foo\": unknown name"},
      {"* * * jan-foo *", "month field \"jan-foo\": unknown name \"foo\""},
      {"5-1 * * * *", "range 5-1 runs backwards"},
      {"0 12 * * fri-sun", "range fri-sun runs backwards"},  // as cronie: sun is 0; write 5-7
      {"*/0 * * * *", "step \"0\" must be a number from 1 to 60"},
      {"*/61 * * * *", "step \"61\""},
      {"*/ * * * *", "step \"\""},
      {"5/15 * * * *", "a step needs * or a range before it"},
      {"1,,2 * * * *", "empty list item"},
      {"a * * * *", "minute field \"a\""},
      {"* * * * mon-", "empty value"},
      {"1-2-3 * * * *", "\"2-3\" is not a number"},
      {"61 * * * * *", "second field \"61\""},
      {"@reboot", "unknown macro \"@reboot\""},
      {"@every 5m", "unknown macro"},
      {"0 0 30 2 *", "can never fire"},
      {"0 0 31 2,4 *", "can never fire"},
      {"0 0 31 4,6,9,11 *", "can never fire"},
  };
  for (const Row& row : rows) {
    INFO(std::string(row.expression));
    const auto parsed = CronSchedule::parse(row.expression);
    REQUIRE_FALSE(parsed.ok());
    CHECK_MESSAGE(parsed.error().find(row.message) != std::string::npos, parsed.error());
  }
}

TEST_CASE("regression: 29 February on a Sunday, 40 years apart (found by the fuzzer)") {
  // "*/7" in day-of-week starts with '*', so both day fields must match:
  // 29 February that is a Sunday: 2032, 2060, 2088, then 2128 (2100 is not
  // a leap year). The search used to stop after 30 years.
  const auto schedule = CronSchedule::parse("3 4 29 2 */7");
  REQUIRE(schedule.ok());
  const TimeZone& utc = *date::locate_zone("UTC");
  Instant t = at("2026-01-01T00:00:00Z");
  for (const char* expected : {"2032-02-29T04:03:00Z", "2060-02-29T04:03:00Z", "2088-02-29T04:03:00Z",
                               "2128-02-29T04:03:00Z"}) {
    const auto next = schedule->next_after(t, utc);
    REQUIRE(next);
    CHECK(format_instant(*next) == expected);
    t = *next;
  }
}

TEST_CASE("an expression that no 400-year cycle satisfies is rejected") {
  // 30 February never exists, whatever the weekday rule.
  CHECK_FALSE(CronSchedule::parse("0 0 30 2 */2").ok());
  CHECK(CronSchedule::parse("0 0 30 2 */2").error().find("can never fire") != std::string::npos);
}

TEST_CASE("an impossible day of month is fine when a weekday can fire instead") {
  const auto parsed = CronSchedule::parse("0 0 30 2 mon");
  REQUIRE(parsed.ok());
  const auto next = parsed->next_after(at("2026-01-01T00:00:00Z"), *date::locate_zone("UTC"));
  REQUIRE(next);
  CHECK(format_instant(*next) == "2026-02-02T00:00:00Z");
}

TEST_CASE("every hour means the hour field covers 0-23") {
  CHECK(CronSchedule::parse("*/5 * * * *")->runs_every_hour());
  CHECK(CronSchedule::parse("0 */1 * * *")->runs_every_hour());
  CHECK(CronSchedule::parse("0 0-23 * * *")->runs_every_hour());
  CHECK(CronSchedule::parse("@hourly")->runs_every_hour());
  CHECK_FALSE(CronSchedule::parse("0 */2 * * *")->runs_every_hour());
  CHECK_FALSE(CronSchedule::parse("@daily")->runs_every_hour());
}

TEST_CASE("a week of firings every minute across a DST change is strictly increasing and complete") {
  const auto schedule = CronSchedule::parse("* * * * *");
  const TimeZone& berlin = *date::locate_zone("Europe/Berlin");
  Instant t = at("2026-10-22T00:00:00Z");
  const Instant end = at("2026-10-29T00:00:00Z");
  int firings = 0;
  while (true) {
    const auto next = schedule->next_after(t, berlin);
    REQUIRE(next);
    REQUIRE(*next > t);
    if (*next > end) break;
    CHECK(*next - t == std::chrono::minutes(1));
    t = *next;
    ++firings;
  }
  CHECK(firings == 7 * 24 * 60);  // the repeated hour fires too, in real time
}

}  // namespace tidemark
