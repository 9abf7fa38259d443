// A value of a table's cursor column (a watermark, or a window bound) in
// the cursor's own type, held as an integer so that arithmetic is exact:
// microseconds since 1970 for timestamptz (UTC) and timestamp (wall clock),
// days since 1970-01-01 for date, the value itself for integers.
// A plain value type; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace tidemark {

enum class CursorType { TimestampTz, Timestamp, Date, Integer };

struct CursorValue {
  CursorType type = CursorType::TimestampTz;
  std::int64_t raw = 0;

  friend bool operator==(const CursorValue& a, const CursorValue& b) { return a.type == b.type && a.raw == b.raw; }
  friend bool operator!=(const CursorValue& a, const CursorValue& b) { return !(a == b); }
  // Requires a.type == b.type.
  friend bool operator<(const CursorValue& a, const CursorValue& b) { return a.raw < b.raw; }
};

// "timestamptz", "timestamp", "date", "integer": the value_type column.
std::string_view cursor_type_name(CursorType type);
Result<CursorType> cursor_type_from_name(std::string_view name);

// Maps PostgreSQL's format_type() of a column of a built-in cursor type;
// fails for any other type. Each of them has an `=` that holds exactly when
// the two values' images are equal.
Result<CursorType> cursor_type_from_postgres(std::string_view format_type);
// Whether format_type() names smallint, integer or bigint.
bool is_integer_type(std::string_view format_type);

// The fractional-second digits a timestamp column keeps, from its
// format_type() ("timestamp(3) with time zone": 3); 6 when it names none,
// and for every other type.
int cursor_fraction_digits(std::string_view format_type);

// `value` lowered to a multiple of what a column keeping `fraction_digits`
// fractional-second digits can hold (time cursors; dates and integers are
// returned as they are). PostgreSQL rounds a value stored into
// timestamp(p) to p digits, half up, so a row stamped at or after an
// instant t is stored at or after round(t), which can be below t, but
// never below the floor: the bound a window's hi must not exceed.
CursorValue cursor_floor(const CursorValue& value, int fraction_digits);

// The canonical text stored in tidemark.watermarks.value and shown to
// people: 2026-01-01T00:00:00.25Z, 2026-01-01T00:00:00, 2026-01-01, 42.
// Equal values always give equal text (the compare-and-set relies on it).
std::string cursor_to_text(const CursorValue& value);
// For messages and logs: that text, or "(none)" where there is no value
// (no watermark yet), the word status, history and rewind print too.
std::string cursor_text_or_none(const std::optional<CursorValue>& value);

// The value_type of a snapshot table's watermark: a timestamptz, the
// source's clock at its last snapshot, marked apart from a cursor's.
inline constexpr std::string_view kSnapshotValueType = "snapshot";

// Parses canonical text, `initial` and `rewind --to` values: an ISO-8601
// time with an offset (or none, meaning UTC) for timestamptz; without an
// offset for timestamp; a date for date; an integer for integer.
Result<CursorValue> cursor_from_text(CursorType type, std::string_view text);

// A stored watermark: its value_type column and canonical text together
// (kSnapshotValueType reads as a timestamptz).
Result<CursorValue> cursor_from_stored(std::string_view type_name, std::string_view text);

// The value as Unix seconds, for ages and gauges: exact for timestamptz,
// the wall time read as UTC for timestamp, UTC midnight for date; nothing
// for integer cursors, which are not times.
std::optional<double> cursor_unix_seconds(const CursorValue& value);

// A SQL expression of the cursor's type for this value, built only from
// digits, so it is safe to splice into statements that take no parameters
// (COPY), and immutable, so the planner folds it into one constant.
// Example: (('epoch'::timestamp + 1767225600000000 * interval '1 microsecond') AT TIME ZONE 'UTC').
std::string cursor_sql_literal(const CursorValue& value);

// The half-open window `column >= lo AND column < hi` over a quoted column,
// built from cursor_sql_literal. For an integer cursor a hi of the bigint
// maximum stands for "no end" (max + 1 does not exist), so the upper
// bound is left out and the largest id is still read.
std::string cursor_range_predicate(const std::string& quoted_column, const CursorValue& lo, const CursorValue& hi);

// An amount of cursor space: a duration for time cursors (timestamptz,
// timestamp, date) or a count for integer cursors. Which one a cursor needs
// is known only once its column type is read from the source.
struct CursorSpan {
  enum class Kind { Duration, Count };
  Kind kind = Kind::Duration;
  std::int64_t amount = 0;  // seconds for Duration

  bool is_zero() const { return amount == 0; }
  friend bool operator==(const CursorSpan& a, const CursorSpan& b) {
    return a.kind == b.kind && a.amount == b.amount;
  }
};

// A half-open range of cursor values.
struct Window {
  CursorValue lo;
  CursorValue hi;  // exclusive: cursor >= lo AND cursor < hi
};

// value - span (lookback) and value + span (max_window), saturating at the
// type's range. Durations apply to time cursors (rounded up to whole days
// for date, so a lookback never shrinks) and counts to integer cursors; a
// zero span fits either. Fails when the kind does not fit the cursor.
Result<CursorValue> cursor_minus(const CursorValue& value, const CursorSpan& span);
Result<CursorValue> cursor_plus(const CursorValue& value, const CursorSpan& span);

}  // namespace tidemark
