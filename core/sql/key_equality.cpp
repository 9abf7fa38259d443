#include "core/sql/key_equality.h"

#include <regex>

namespace tidemark {
namespace {

bool is_integer(const std::string& type) { return type == "smallint" || type == "integer" || type == "bigint"; }
bool is_float(const std::string& type) { return type == "real" || type == "double precision"; }

// numeric(p,s)'s scale; nothing for an unconstrained numeric or another type.
std::optional<int> numeric_scale(const std::string& type) {
  static const std::regex kNumeric("numeric\\(([0-9]+),([0-9]+)\\)");
  std::smatch m;
  if (!std::regex_match(type, m, kNumeric)) return std::nullopt;
  return std::stoi(m[2].str());
}

// The fractional digits of a timestamp or time type (6 unless it names
// fewer), and its kind without them; nothing for other types.
std::optional<std::pair<std::string, int>> time_precision(const std::string& type) {
  static const std::regex kTime("(timestamp|time)(\\(([0-6])\\))?( with(out)? time zone)");
  std::smatch m;
  if (!std::regex_match(type, m, kTime)) return std::nullopt;
  return std::make_pair(m[1].str() + m[4].str(), m[3].matched ? std::stoi(m[3].str()) : 6);
}

bool is_character(const std::string& type) { return type.rfind("character(", 0) == 0 || type == "character"; }

}  // namespace

std::optional<std::string> coarser_key_equality(const ColumnShape& source, const ColumnShape& target) {
  const std::string& from = source.type;
  const std::string& to = target.type;
  if (!target.nondeterministic_collation.empty() &&
      target.nondeterministic_collation != source.nondeterministic_collation) {
    return "collation " + target.nondeterministic_collation +
           " of the target compares values the source tells apart as equal (case or accents): give the target's " +
           "column a deterministic collation, e.g. COLLATE \"C\"";
  }
  if (is_character(to) && !is_character(from)) {
    return "the target's " + to + " ignores trailing blanks, so 'a' and 'a ' of the source's " + from +
           " are one key there: make the target's column " + from;
  }
  if (from == to) return std::nullopt;
  const auto to_scale = numeric_scale(to);
  const auto from_scale = numeric_scale(from);
  const bool rounds_numeric = to_scale && (from == "numeric" || is_float(from) || (from_scale && *from_scale > *to_scale));
  const bool rounds_to_integer = is_integer(to) && (from.rfind("numeric", 0) == 0 || is_float(from));
  const bool rounds_float = to == "real" && (from == "double precision" || from.rfind("numeric", 0) == 0 || from == "bigint");
  const auto to_time = time_precision(to);
  const auto from_time = time_precision(from);
  const bool rounds_time = to_time && from_time && to_time->first == from_time->first && to_time->second < from_time->second;
  if (rounds_numeric || rounds_to_integer || rounds_float || rounds_time) {
    return "the target's " + to + " rounds the source's " + from + ", so keys that differ only in what is rounded "
           "away are one key there: make the target's column " + from;
  }
  return std::nullopt;
}

}  // namespace tidemark
