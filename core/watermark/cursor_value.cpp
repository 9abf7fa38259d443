#include "core/watermark/cursor_value.h"

#include <utility>

#include <charconv>
#include <limits>

#include "core/time/instant_text.h"

namespace tidemark {
namespace {

constexpr std::int64_t kMicrosPerSecond = 1'000'000;
constexpr std::int64_t kSecondsPerDay = 86'400;

std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

std::string format_timestamp(std::int64_t micros, bool utc) {
  const std::int64_t seconds = floor_div(micros, kMicrosPerSecond);
  const std::int64_t fraction = micros - seconds * kMicrosPerSecond;
  std::string out = date::format("%FT%T", date::sys_seconds(std::chrono::seconds(seconds)));
  if (fraction != 0) {
    std::string digits = std::to_string(fraction);
    digits.insert(0, 6 - digits.size(), '0');
    while (digits.back() == '0') digits.pop_back();
    out += "." + digits;
  }
  if (utc) out += "Z";
  return out;
}

// Converts a span to the units of `type`; fails when its kind does not fit.
Result<std::int64_t> span_in_units(CursorType type, const CursorSpan& span) {
  if (span.is_zero()) return std::int64_t{0};
  const bool time_cursor = type != CursorType::Integer;
  if (time_cursor != (span.kind == CursorSpan::Kind::Duration)) {
    return Error{time_cursor ? "a " + std::string(cursor_type_name(type)) +
                                   " cursor needs a duration (such as 2h), not a count"
                             : std::string("an integer cursor needs a count (such as 1000), not a duration")};
  }
  switch (type) {
    case CursorType::TimestampTz:
    case CursorType::Timestamp: return span.amount * kMicrosPerSecond;
    case CursorType::Date: return (span.amount + kSecondsPerDay - 1) / kSecondsPerDay;
    case CursorType::Integer: return span.amount;
  }
  return std::int64_t{0};
}

std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) {
    return b > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
  }
  return out;
}

}  // namespace

std::string_view cursor_type_name(CursorType type) {
  switch (type) {
    case CursorType::TimestampTz: return "timestamptz";
    case CursorType::Timestamp: return "timestamp";
    case CursorType::Date: return "date";
    case CursorType::Integer: return "integer";
  }
  return "?";
}

Result<CursorType> cursor_type_from_name(std::string_view name) {
  for (CursorType t : {CursorType::TimestampTz, CursorType::Timestamp, CursorType::Date, CursorType::Integer}) {
    if (cursor_type_name(t) == name) return t;
  }
  return Error{"unknown cursor type \"" + std::string(name) + "\""};
}

Result<CursorType> cursor_type_from_postgres(std::string_view format_type) {
  // The built-in spellings only, "timestamp(3) with time zone" included: a
  // domain or a type of another name (a "timestamp_like") is none of them.
  for (const auto& [zone, type] : {std::pair<std::string_view, CursorType>{" with time zone", CursorType::TimestampTz},
                                   {" without time zone", CursorType::Timestamp}}) {
    if (format_type.size() <= zone.size() || format_type.substr(format_type.size() - zone.size()) != zone) continue;
    const std::string_view head = format_type.substr(0, format_type.size() - zone.size());
    const bool precision = head.size() == 12 && head.substr(0, 10) == "timestamp(" && head[10] >= '0' &&
                           head[10] <= '6' && head[11] == ')';
    if (head == "timestamp" || precision) return type;
  }
  if (format_type == "date") return CursorType::Date;
  if (format_type == "integer" || format_type == "bigint" || format_type == "smallint") return CursorType::Integer;
  return Error{"the cursor column has type " + std::string(format_type) +
               "; it must be timestamptz, timestamp, date or an integer type"};
}

bool is_integer_type(std::string_view format_type) {
  const Result<CursorType> type = cursor_type_from_postgres(format_type);
  return type && *type == CursorType::Integer;
}

int cursor_fraction_digits(std::string_view format_type) {
  if (format_type.rfind("timestamp(", 0) != 0) return 6;
  const std::size_t close = format_type.find(')');
  int digits = 6;
  const auto [end, ec] = std::from_chars(format_type.data() + 10, format_type.data() + close, digits);
  if (ec != std::errc() || end != format_type.data() + close || digits < 0 || digits > 6) return 6;
  return digits;
}

CursorValue cursor_floor(const CursorValue& value, int fraction_digits) {
  if (value.type != CursorType::TimestampTz && value.type != CursorType::Timestamp) return value;
  std::int64_t step = 1;
  for (int i = fraction_digits; i < 6; ++i) step *= 10;
  return CursorValue{value.type, floor_div(value.raw, step) * step};  // for values before 1970 as well
}

std::string cursor_to_text(const CursorValue& value) {
  switch (value.type) {
    case CursorType::TimestampTz: return format_timestamp(value.raw, true);
    case CursorType::Timestamp: return format_timestamp(value.raw, false);
    case CursorType::Date: return date::format("%F", date::sys_days(date::days(value.raw)));
    case CursorType::Integer: return std::to_string(value.raw);
  }
  return {};
}

std::string cursor_text_or_none(const std::optional<CursorValue>& value) {
  return value ? cursor_to_text(*value) : std::string("(none)");
}

Result<CursorValue> cursor_from_text(CursorType type, std::string_view text) {
  const auto fail = [&](const std::string& expected) {
    return Error{"\"" + std::string(text) + "\" is not a valid " + std::string(cursor_type_name(type)) + " value: expected " +
                 expected};
  };
  if (type == CursorType::Integer) {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size()) return fail("an integer");
    return CursorValue{type, v};
  }
  const auto iso = parse_iso8601(text);
  if (!iso) return fail("an ISO-8601 " + std::string(type == CursorType::Date ? "date" : "time"));
  switch (type) {
    case CursorType::TimestampTz: {
      const std::int64_t offset = iso->offset.value_or(std::chrono::seconds(0)).count() * kMicrosPerSecond;
      return CursorValue{type, iso->wall_micros - offset};
    }
    case CursorType::Timestamp:
      if (iso->offset) return fail("a local time without Z or an offset");
      return CursorValue{type, iso->wall_micros};
    case CursorType::Date:
      if (iso->has_time) return fail("a date such as 2026-01-01");
      return CursorValue{type, floor_div(iso->wall_micros, kMicrosPerSecond * kSecondsPerDay)};
    case CursorType::Integer: break;
  }
  return fail("a value");
}

Result<CursorValue> cursor_from_stored(std::string_view type_name, std::string_view text) {
  const auto type = type_name == kSnapshotValueType ? Result<CursorType>(CursorType::TimestampTz)
                                                     : cursor_type_from_name(type_name);
  if (!type) return type.failure();
  return cursor_from_text(*type, text);
}

std::optional<double> cursor_unix_seconds(const CursorValue& value) {
  switch (value.type) {
    case CursorType::TimestampTz:
    case CursorType::Timestamp: return static_cast<double>(value.raw) / kMicrosPerSecond;
    case CursorType::Date: return static_cast<double>(value.raw) * kSecondsPerDay;
    case CursorType::Integer: return std::nullopt;
  }
  return std::nullopt;
}

std::string cursor_sql_literal(const CursorValue& value) {
  const std::string n = std::to_string(value.raw);
  switch (value.type) {
    // timestamptz + interval depends on the session's time zone, so the
    // planner cannot fold it into a constant: a filter over a sequential
    // scan would compute both bounds again for every row (about 15% more
    // source CPU for a first load without an index on the cursor). The
    // same instant reached through timestamp arithmetic and AT TIME ZONE
    // 'UTC' is immutable and folds to one constant.
    case CursorType::TimestampTz:
      return "(('epoch'::timestamp + " + n + " * interval '1 microsecond') AT TIME ZONE 'UTC')";
    case CursorType::Timestamp: return "('epoch'::timestamp + " + n + " * interval '1 microsecond')";
    case CursorType::Date: return "('1970-01-01'::date + " + n + ")";
    case CursorType::Integer: return "(" + n + "::bigint)";
  }
  return "NULL";
}

std::string cursor_range_predicate(const std::string& quoted_column, const CursorValue& lo, const CursorValue& hi) {
  std::string out = quoted_column + " >= " + cursor_sql_literal(lo);
  if (hi.type == CursorType::Integer && hi.raw == std::numeric_limits<std::int64_t>::max()) return out;
  return out + " AND " + quoted_column + " < " + cursor_sql_literal(hi);
}

Result<CursorValue> cursor_minus(const CursorValue& value, const CursorSpan& span) {
  const auto units = span_in_units(value.type, span);
  if (!units) return units.failure();
  return CursorValue{value.type, saturating_add(value.raw, -*units)};
}

Result<CursorValue> cursor_plus(const CursorValue& value, const CursorSpan& span) {
  const auto units = span_in_units(value.type, span);
  if (!units) return units.failure();
  return CursorValue{value.type, saturating_add(value.raw, *units)};
}

}  // namespace tidemark
