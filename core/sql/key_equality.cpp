#include "core/sql/key_equality.h"

#include <algorithm>
#include <regex>

#include "core/text/sql_identifier.h"
#include "core/watermark/cursor_value.h"

namespace tidemark {
namespace {

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

bool is_character(const std::string& type) {
  return type.rfind("character(", 0) == 0 || type == "character" || type == "bpchar";
}

// citext (the extension's, in whichever schema) compares case-insensitively.
bool is_citext(const std::string& type) {
  return type == "citext" || (type.size() > 7 && type.compare(type.size() - 7, 7, ".citext") == 0);
}

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
  if (is_citext(to) && !is_citext(from)) {
    return "the target's " + to + " compares case-insensitively, so 'a' and 'A' of the source's " + from +
           " are one key there: make the target's column " + from;
  }
  if (is_character(to) && !is_character(from)) {
    return "the target's " + to + " ignores trailing blanks, so 'a' and 'a ' of the source's " + from +
           " are one key there: make the target's column " + from;
  }
  if (from == to) return std::nullopt;
  const auto to_scale = numeric_scale(to);
  const auto from_scale = numeric_scale(from);
  const bool numeric_with_fraction = from == "numeric" || (from_scale && *from_scale > 0);
  const bool rounds_numeric = to_scale && (from == "numeric" || is_float(from) || (from_scale && *from_scale > *to_scale));
  const bool rounds_to_integer = is_integer_type(to) && (numeric_with_fraction || is_float(from));
  // real holds 24 bits of mantissa, double precision 53.
  const bool rounds_float = (to == "real" && (from == "double precision" || from.rfind("numeric", 0) == 0 ||
                                              from == "bigint" || from == "integer")) ||
                            (to == "double precision" && (from.rfind("numeric", 0) == 0 || from == "bigint"));
  const auto to_time = time_precision(to);
  const auto from_time = time_precision(from);
  const bool rounds_time = (to_time && from_time && to_time->first == from_time->first && to_time->second < from_time->second) ||
                           (to == "date" && from_time && from_time->first.rfind("timestamp", 0) == 0);
  if (rounds_numeric || rounds_to_integer || rounds_float || rounds_time) {
    return "the target's " + to + " rounds the source's " + from + ", so keys that differ only in what is rounded "
           "away are one key there: make the target's column " + from;
  }
  return std::nullopt;
}

std::optional<std::string> missing_enum_labels(const ColumnShape& source, const ColumnShape& target) {
  if (source.enum_type.empty() || target.enum_type.empty()) return std::nullopt;
  const auto has = [](const std::vector<std::string>& labels, const std::string& label) {
    return std::find(labels.begin(), labels.end(), label) != labels.end();
  };
  std::vector<std::string> missing;
  for (const std::string& label : source.enum_labels) {
    if (!has(target.enum_labels, label)) missing.push_back(label);
  }
  if (missing.empty()) return std::nullopt;
  const auto literal = [](const std::string& label) { return quote_literal(label); };
  std::string labels;
  for (const std::string& label : missing) labels += (labels.empty() ? "" : ", ") + literal(label);
  // One label changed in place, the rest as they were: a rename.
  if (missing.size() == 1 && source.enum_labels.size() == target.enum_labels.size()) {
    for (std::size_t i = 0; i < source.enum_labels.size(); ++i) {
      if (source.enum_labels[i] != missing[0] || has(source.enum_labels, target.enum_labels[i])) continue;
      return "enum " + target.enum_type + " lacks label " + labels + " of the source's " + source.enum_type +
             ", which has " + literal(target.enum_labels[i]) + " no longer: it was renamed there; rename it here too "
             "(ALTER TYPE " + target.enum_type + " RENAME VALUE " + literal(target.enum_labels[i]) + " TO " + labels +
             ")";
    }
  }
  std::string fix;
  for (const std::string& label : missing) {
    fix += (fix.empty() ? "" : "; ") + std::string("ALTER TYPE ") + target.enum_type + " ADD VALUE " + literal(label);
  }
  return "enum " + target.enum_type + " lacks label" + (missing.size() > 1 ? "s " : " ") + labels +
         " of the source's " + source.enum_type + ", so rows with " + (missing.size() > 1 ? "them" : "it") +
         " cannot be written: add " + (missing.size() > 1 ? "them" : "it") + " (" + fix + ")";
}

}  // namespace tidemark
