#include "core/instant_text.h"

#include <regex>

namespace tidemark {

Result<Instant> parse_instant(std::string_view text) {
  static const std::regex kIso(
      R"(([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[T ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.[0-9]+)?)?(Z|[+-][0-9]{2}(?::?[0-9]{2})?)?)?)");
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
  Instant t = date::sys_days(ymd) + std::chrono::hours(number(4)) + std::chrono::minutes(number(5)) +
              std::chrono::seconds(number(6));
  const std::string zone = m[7].str();
  if (!zone.empty() && zone != "Z") {
    const int hours = std::stoi(zone.substr(1, 2));
    const std::string rest = zone.size() > 3 ? zone.substr(zone.size() - 2) : "00";
    const int minutes = std::stoi(rest);
    if (hours > 23 || minutes > 59) return invalid();
    const std::chrono::seconds offset = std::chrono::hours(hours) + std::chrono::minutes(minutes);
    t = zone[0] == '+' ? t - offset : t + offset;
  }
  return t;
}

std::string format_instant(Instant t) { return date::format("%FT%TZ", t); }

}  // namespace tidemark
