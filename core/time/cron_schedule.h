// A parsed cron expression and the calculation of its next firing in a
// time zone, following cronie's daylight-saving rules (SPEC §3).
// Immutable after parse(); next_after() is const and thread-safe.
#pragma once

#include <bitset>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"
#include "core/time/time_types.h"

namespace tidemark {

class CronSchedule {
 public:
  // Accepts 5 fields (minute hour day-of-month month day-of-week), 6 with a
  // leading seconds field, or @yearly @annually @monthly @weekly @daily
  // @midnight @hourly. Fields take *, numbers, names (jan, mon), ranges,
  // steps (*/15, 1-30/5) and lists; Sunday is 0 or 7. Fails with the field,
  // the token and what is allowed; also fails for an expression that can
  // never fire (0 0 30 2 *).
  static Result<CronSchedule> parse(std::string_view expression);

  // The first firing strictly after `after`, evaluated in `zone`.
  // Wall-clock times are matched in the zone. A local time that falls in a
  // spring-forward gap fires once at the end of the gap, and a repeated
  // local time fires only at its first occurrence, unless the schedule
  // runs every hour (hour field covers 0-23): then it fires at every
  // matching local time that exists, in every real hour. Searches one
  // 400-year calendar cycle at most, which holds a firing of every
  // expression parse() accepts; nothing only past the end of the calendar
  // (year 32767). Never loops.
  std::optional<Instant> next_after(Instant after, const TimeZone& zone) const;

  const std::string& expression() const { return expression_; }
  // True when the hour field covers every hour ("*", "*/1", "0-23").
  bool runs_every_hour() const { return hours_.all(); }

 private:
  CronSchedule() = default;

  bool day_matches(date::sys_days day) const;
  // The first wall-clock time at or after `from` that matches every field,
  // ignoring zones; nothing beyond the search horizon.
  std::optional<LocalTime> next_local_match(LocalTime from, LocalTime horizon) const;

  std::string expression_;
  std::bitset<60> seconds_;
  std::bitset<60> minutes_;
  std::bitset<24> hours_;
  std::bitset<32> days_of_month_;  // bits 1..31
  std::bitset<13> months_;         // bits 1..12
  std::bitset<7> days_of_week_;    // 0 = Sunday
  // Vixie cron: a day field that starts with '*' does not restrict; when
  // both are restricted a day matches if either matches.
  bool dom_star_ = true;
  bool dow_star_ = true;
};

}  // namespace tidemark
