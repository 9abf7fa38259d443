#include "core/time/duration.h"

#include <charconv>
#include <cstdint>

namespace tidemark {

Result<std::chrono::seconds> parse_duration(std::string_view text) {
  const auto expected = [&] {
    return Error{"expected a duration such as 30s, 15m, 2h or 1d, got \"" + std::string(text) + "\""};
  };
  if (text.size() < 2) return expected();
  const char unit = text.back();
  std::int64_t scale = 0;
  switch (unit) {
    case 's': scale = 1; break;
    case 'm': scale = 60; break;
    case 'h': scale = 3600; break;
    case 'd': scale = 86400; break;
    default: return expected();
  }
  const std::string_view digits = text.substr(0, text.size() - 1);
  for (char c : digits) {
    if (c < '0' || c > '9') return expected();
  }
  std::int64_t amount = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), amount);
  if (ec != std::errc() || end != digits.data() + digits.size() ||
      amount > kMaxDuration.count() / scale) {
    return Error{"duration \"" + std::string(text) + "\" is longer than the maximum of " +
                 format_duration(kMaxDuration)};
  }
  return std::chrono::seconds(amount * scale);
}

std::string format_duration(std::chrono::seconds d) {
  const std::int64_t s = d.count();
  if (s != 0 && s % 86400 == 0) return std::to_string(s / 86400) + "d";
  if (s != 0 && s % 3600 == 0) return std::to_string(s / 3600) + "h";
  if (s != 0 && s % 60 == 0) return std::to_string(s / 60) + "m";
  return std::to_string(s) + "s";
}

std::string format_age(std::int64_t seconds) {
  if (seconds < 0) return "-" + format_age(-seconds);
  if (seconds < 120) return std::to_string(seconds) + "s";
  if (seconds < 7200) return std::to_string(seconds / 60) + "m";
  if (seconds < 2 * 86400) return std::to_string(seconds / 3600) + "h";
  return std::to_string(seconds / 86400) + "d";
}

}  // namespace tidemark
