#include "core/config/byte_size.h"

#include <array>
#include <limits>
#include <utility>

namespace tidemark {
namespace {

constexpr std::array<std::pair<std::string_view, std::int64_t>, 5> kByteUnits{{
    {"TB", std::int64_t{1} << 40},
    {"GB", std::int64_t{1} << 30},
    {"MB", std::int64_t{1} << 20},
    {"kB", std::int64_t{1} << 10},
    {"B", 1},
}};

}  // namespace

Result<std::int64_t> parse_byte_size(std::string_view text) {
  const auto fail = [&] {
    return Error{"\"" + std::string(text) + "\" is not a size: write a whole number and a unit, B, kB, MB, GB or TB "
                 "(each 1024 of the one before), e.g. 256MB"};
  };
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 15) return fail();
  std::int64_t number = 0;
  for (std::size_t i = 0; i < digits; ++i) number = number * 10 + (text[i] - '0');
  const std::string_view unit = text.substr(digits);
  for (const auto& [name, bytes] : kByteUnits) {
    if (unit != name) continue;
    if (number > std::numeric_limits<std::int64_t>::max() / bytes) return fail();
    return number * bytes;
  }
  return fail();
}

std::string format_byte_size(std::int64_t bytes) {
  for (const auto& [name, size] : kByteUnits) {
    if (bytes != 0 && bytes % size == 0) return std::to_string(bytes / size) + std::string(name);
  }
  return std::to_string(bytes) + "B";
}

}  // namespace tidemark
