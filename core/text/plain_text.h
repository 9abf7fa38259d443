// Small text helpers every message and parser shares: ASCII case folding
// and lists joined for reading. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tidemark {

// `text` with A-Z folded to a-z; every other byte (UTF-8 included) kept.
std::string ascii_lower(std::string_view text);

// Whether `text` is empty or only spaces, tabs and line ends: a reason
// the audit would keep as nothing.
bool is_blank(std::string_view text);

// 1234567 as "1,234,567": counts for people.
std::string grouped(std::int64_t value);

// The items one after another, `separator` between each two.
std::string join(const std::vector<std::string>& items, std::string_view separator = ", ");

}  // namespace tidemark
