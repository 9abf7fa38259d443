#include <doctest/doctest.h>

#include <string>

#include "core/watermark/cursor_value.h"

namespace tidemark {

TEST_CASE("cursor values round-trip through their canonical text") {
  struct Row {
    CursorType type;
    const char* input;
    const char* canonical;  // nullptr: rejected
  };
  const Row rows[] = {
      {CursorType::TimestampTz, "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z"},
      {CursorType::TimestampTz, "2026-01-01", "2026-01-01T00:00:00Z"},
      {CursorType::TimestampTz, "2026-01-01T02:00:00+02:00", "2026-01-01T00:00:00Z"},
      {CursorType::TimestampTz, "2025-12-31T19:30:00-04:30", "2026-01-01T00:00:00Z"},
      {CursorType::TimestampTz, "2026-01-01 00:00:00.25", "2026-01-01T00:00:00.25Z"},
      {CursorType::TimestampTz, "2026-01-01T00:00:00.000001Z", "2026-01-01T00:00:00.000001Z"},
      {CursorType::TimestampTz, "1969-12-31T23:59:59.5Z", "1969-12-31T23:59:59.5Z"},
      {CursorType::TimestampTz, "2026-01-01T00:00:00.0000001Z", nullptr},  // finer than PostgreSQL keeps
      {CursorType::TimestampTz, "2026-02-30T00:00:00Z", nullptr},
      {CursorType::TimestampTz, "yesterday", nullptr},
      {CursorType::Timestamp, "2026-03-29T02:30:00", "2026-03-29T02:30:00"},
      {CursorType::Timestamp, "2026-03-29T02:30:00Z", nullptr},  // a wall-clock cursor takes no offset
      {CursorType::Date, "2026-03-29", "2026-03-29"},
      {CursorType::Date, "1960-01-01", "1960-01-01"},
      {CursorType::Date, "2026-03-29T00:00:00", nullptr},
      {CursorType::Integer, "42", "42"},
      {CursorType::Integer, "-7", "-7"},
      {CursorType::Integer, "9223372036854775807", "9223372036854775807"},
      {CursorType::Integer, "9223372036854775808", nullptr},
      {CursorType::Integer, "4.5", nullptr},
  };
  for (const Row& row : rows) {
    INFO((std::string(cursor_type_name(row.type)) + " " + row.input));
    const auto parsed = cursor_from_text(row.type, row.input);
    if (row.canonical == nullptr) {
      CHECK_FALSE(parsed.ok());
      continue;
    }
    REQUIRE(parsed.ok());
    CHECK(cursor_to_text(*parsed) == row.canonical);
    const auto again = cursor_from_text(row.type, cursor_to_text(*parsed));
    REQUIRE(again.ok());
    CHECK(*again == *parsed);
  }
}

TEST_CASE("cursor types from PostgreSQL's format_type") {
  CHECK(*cursor_type_from_postgres("timestamp with time zone") == CursorType::TimestampTz);
  CHECK(*cursor_type_from_postgres("timestamp(3) with time zone") == CursorType::TimestampTz);
  CHECK(*cursor_type_from_postgres("timestamp without time zone") == CursorType::Timestamp);
  CHECK(*cursor_type_from_postgres("date") == CursorType::Date);
  CHECK(*cursor_type_from_postgres("bigint") == CursorType::Integer);
  CHECK(*cursor_type_from_postgres("integer") == CursorType::Integer);
  CHECK(*cursor_type_from_postgres("timestamp(0) without time zone") == CursorType::Timestamp);
  CHECK(*cursor_type_from_postgres("smallint") == CursorType::Integer);
  CHECK_FALSE(cursor_type_from_postgres("text").ok());
  CHECK_FALSE(cursor_type_from_postgres("numeric").ok());
  // Only the built-in spellings: a type named like one is not one.
  CHECK_FALSE(cursor_type_from_postgres("timestamp_like").ok());
  CHECK_FALSE(cursor_type_from_postgres("timestamptz_domain").ok());
  CHECK_FALSE(cursor_type_from_postgres("timestamp(12) with time zone").ok());
}

TEST_CASE("lookback and max_window arithmetic fits the cursor type") {
  const CursorValue ts = *cursor_from_text(CursorType::TimestampTz, "2026-01-03T00:00:00Z");
  const CursorSpan two_days{CursorSpan::Kind::Duration, 2 * 86400};
  CHECK(cursor_to_text(*cursor_minus(ts, two_days)) == "2026-01-01T00:00:00Z");
  CHECK(cursor_to_text(*cursor_plus(ts, two_days)) == "2026-01-05T00:00:00Z");

  const CursorValue day = *cursor_from_text(CursorType::Date, "2026-01-03");
  // A lookback of one hour on a date cursor still reaches back a whole day.
  CHECK(cursor_to_text(*cursor_minus(day, {CursorSpan::Kind::Duration, 3600})) == "2026-01-02");
  CHECK(cursor_to_text(*cursor_minus(day, two_days)) == "2026-01-01");

  const CursorValue n = *cursor_from_text(CursorType::Integer, "1000");
  CHECK(cursor_to_text(*cursor_minus(n, {CursorSpan::Kind::Count, 100})) == "900");
  CHECK(cursor_to_text(*cursor_minus(n, {CursorSpan::Kind::Count, 0})) == "1000");
  CHECK(cursor_to_text(*cursor_minus(ts, {CursorSpan::Kind::Count, 0})) == "2026-01-03T00:00:00Z");

  CHECK_FALSE(cursor_minus(n, two_days).ok());
  CHECK_FALSE(cursor_minus(ts, {CursorSpan::Kind::Count, 5}).ok());
  // Saturates rather than wrapping.
  const CursorValue big{CursorType::Integer, INT64_MAX - 1};
  CHECK(cursor_plus(big, {CursorSpan::Kind::Count, 10})->raw == INT64_MAX);
}

TEST_CASE("SQL literals are made of digits and typed") {
  CHECK(cursor_sql_literal(*cursor_from_text(CursorType::TimestampTz, "1970-01-01T00:00:01Z")) ==
        "(('epoch'::timestamp + 1000000 * interval '1 microsecond') AT TIME ZONE 'UTC')");
  CHECK(cursor_sql_literal(*cursor_from_text(CursorType::Timestamp, "1970-01-01T00:00:01")) ==
        "('epoch'::timestamp + 1000000 * interval '1 microsecond')");
  CHECK(cursor_sql_literal(*cursor_from_text(CursorType::Date, "1969-12-31")) == "('1970-01-01'::date + -1)");
  CHECK(cursor_sql_literal(CursorValue{CursorType::Integer, 5}) == "(5::bigint)");
}

TEST_CASE("stored watermarks parse with their type, and time cursors give Unix seconds") {
  const auto tz = cursor_from_stored("timestamptz", "1970-01-01T00:00:01.5Z");
  REQUIRE(tz.ok());
  CHECK(*cursor_unix_seconds(*tz) == 1.5);
  CHECK(*cursor_unix_seconds(*cursor_from_stored("timestamp", "1969-12-31T23:59:59")) == -1.0);
  CHECK(*cursor_unix_seconds(*cursor_from_stored("date", "1970-01-02")) == 86400.0);
  CHECK_FALSE(cursor_unix_seconds(*cursor_from_stored("integer", "42")).has_value());
  CHECK_FALSE(cursor_from_stored("text", "x").ok());
  CHECK_FALSE(cursor_from_stored("date", "soon").ok());
}

TEST_CASE("a timestamp column's precision, and bounds lowered to what it can hold") {
  CHECK(cursor_fraction_digits("timestamp(3) with time zone") == 3);
  CHECK(cursor_fraction_digits("timestamp(0) without time zone") == 0);
  CHECK(cursor_fraction_digits("timestamp with time zone") == 6);
  CHECK(cursor_fraction_digits("timestamp(6) without time zone") == 6);
  CHECK(cursor_fraction_digits("date") == 6);
  CHECK(cursor_fraction_digits("bigint") == 6);

  struct Row {
    CursorType type;
    std::int64_t raw;
    int digits;
    std::int64_t floored;
  };
  const Row rows[] = {
      // ...38.149397 in a timestamptz(3): a row stamped then is stored
      // as ...38.149, below the instant itself.
      {CursorType::TimestampTz, 1796000038149397, 3, 1796000038149000},
      {CursorType::TimestampTz, 1796000038149999, 3, 1796000038149000},
      {CursorType::TimestampTz, 1796000038149000, 3, 1796000038149000},
      {CursorType::Timestamp, 1796000038649397, 0, 1796000038000000},
      {CursorType::TimestampTz, 1796000038149397, 6, 1796000038149397},
      {CursorType::TimestampTz, 1796000038149397, 1, 1796000038100000},
      // Before 1970: towards minus infinity, not towards zero.
      {CursorType::Timestamp, -1500, 3, -2000},
      {CursorType::Timestamp, -1000, 3, -1000},
      // Dates and integers have no fractions.
      {CursorType::Date, 20000, 0, 20000},
      {CursorType::Integer, 12345, 0, 12345},
  };
  for (const Row& row : rows) {
    CAPTURE(row.raw);
    CAPTURE(row.digits);
    CHECK(cursor_floor(CursorValue{row.type, row.raw}, row.digits) == CursorValue{row.type, row.floored});
  }
}

}  // namespace tidemark
