#include "core/time/instant_text.h"

#include <cmath>
#include <regex>

namespace tidemark {

Result<IsoTime> parse_iso8601(std::string_view text) {
  static const std::regex kIso(
      R"(([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[T ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.([0-9]{1,6}))?)?(Z|[+-][0-9]{2}(?::?[0-9]{2})?)?)?)");
  const std::string s(text);
  std::smatch m;
  const auto invalid = [&] {
    return Error{"expected an ISO-8601 time such as 2026-03-29T01:00:00Z, got \"" + s + "\""};
  };
  if (!std::regex_match(s, m, kIso)) return invalid();
  const auto number = [&](int i) { return m[i].matched ? std::stoi(m[i].str()) : 0; };
  const date::year_month_day ymd{date::year(number(1)), date::month(static_cast<unsigned>(number(2))),
                                 date::day(static_cast<unsigned>(number(3)))};
  if (!ymd.ok() || number(4) > 23 || number(5) > 59 || number(6) > 59) return invalid();
  IsoTime out;
  out.has_time = m[4].matched;
  std::int64_t micros = 0;
  if (m[7].matched) {
    std::string digits = m[7].str();
    digits.resize(6, '0');
    micros = std::stoll(digits);
  }
  const auto wall = date::sys_days(ymd) + std::chrono::hours(number(4)) + std::chrono::minutes(number(5)) +
                    std::chrono::seconds(number(6));
  out.wall_micros = std::chrono::duration_cast<std::chrono::microseconds>(wall.time_since_epoch()).count() + micros;
  const std::string zone = m[8].str();
  if (zone == "Z") {
    out.offset = std::chrono::seconds(0);
  } else if (!zone.empty()) {
    const int hours = std::stoi(zone.substr(1, 2));
    const int minutes = zone.size() > 3 ? std::stoi(zone.substr(zone.size() - 2)) : 0;
    if (hours > 23 || minutes > 59) return invalid();
    const std::chrono::seconds offset = std::chrono::hours(hours) + std::chrono::minutes(minutes);
    out.offset = zone[0] == '+' ? offset : -offset;
  }
  return out;
}

Result<Instant> parse_instant(std::string_view text) {
  const auto iso = parse_iso8601(text);
  if (!iso) return iso.failure();
  const std::int64_t seconds = iso->wall_micros / 1'000'000 - (iso->wall_micros % 1'000'000 < 0 ? 1 : 0);
  return Instant(std::chrono::seconds(seconds)) - iso->offset.value_or(std::chrono::seconds(0));
}

std::string format_instant(Instant t) { return date::format("%FT%TZ", t); }

std::string format_unix_seconds(double unix_seconds) {
  return format_instant(Instant(std::chrono::seconds(std::llround(unix_seconds))));
}

}  // namespace tidemark
