// The safe horizon rule as a table: what the source reports in, hi out.
// Expected values follow from the rule (SPEC §3), not from running it.
#include <doctest/doctest.h>

#include <limits>

#include "core/watermark/safe_horizon.h"

namespace tidemark {
namespace {

constexpr SourceMicros kSecond = 1'000'000;
constexpr SourceMicros kClock = 1'000 * kSecond;

OpenTransaction open_since(SourceMicros started, bool prepared = false) {
  OpenTransaction t;
  t.started = started;
  t.prepared = prepared;
  t.pid = prepared ? 0 : 42;
  t.application_name = prepared ? "gid-1" : "app";
  t.state = prepared ? "prepared" : "idle in transaction";
  return t;
}

HorizonInput input_for(CursorType type, std::optional<OpenTransaction> oldest = std::nullopt) {
  HorizonInput in;
  in.type = type;
  in.reading.clock = kClock;
  in.reading.oldest = std::move(oldest);
  in.source_name = "shop";
  return in;
}

}  // namespace

TEST_CASE("time cursors: hi is the clock less the margin, lowered to the oldest open transaction") {
  struct Row {
    const char* name;
    std::optional<OpenTransaction> oldest;
    std::optional<SourceMicros> replayed_until;
    SourceMicros hi;
    bool held;
  };
  const Row rows[] = {
      {"nothing open", std::nullopt, std::nullopt, kClock - kStartReportMargin, false},
      {"open for 10 s", open_since(kClock - 10 * kSecond), std::nullopt, kClock - 10 * kSecond, true},
      {"opened within the margin", open_since(kClock - kStartReportMargin / 2), std::nullopt,
       kClock - kStartReportMargin, false},
      {"standby behind its primary", std::nullopt, kClock - 5 * kSecond, kClock - 5 * kSecond, true},
      {"standby behind, older transaction", open_since(kClock - 7 * kSecond), kClock - 5 * kSecond,
       kClock - 7 * kSecond, true},
  };
  for (const Row& row : rows) {
    INFO(row.name);
    HorizonInput in = input_for(CursorType::TimestampTz, row.oldest);
    in.reading.replayed_until = row.replayed_until;
    const auto d = decide_horizon(in);
    REQUIRE(d);
    REQUIRE(d->instant);
    CHECK(*d->instant == row.hi);
    CHECK(d->lag_seconds == doctest::Approx(static_cast<double>(kClock - row.hi) / 1e6));
    CHECK(d->held_by.empty() != row.held);
    CHECK_FALSE(d->hold_at_watermark);
  }
}

TEST_CASE("a prepared transaction holds every cursor type at the stored watermark") {
  for (CursorType type : {CursorType::TimestampTz, CursorType::Integer}) {
    HorizonInput in = input_for(type, open_since(kClock - 3 * kSecond, /*prepared=*/true));
    in.reading.max_cursor = 99;
    const auto d = decide_horizon(in);
    REQUIRE(d);
    CHECK(d->hold_at_watermark);
    CHECK_FALSE(d->instant);
    CHECK_FALSE(d->value);
    CHECK(d->held_by.find("gid-1") != std::string::npos);
  }
}

TEST_CASE("integer cursors: hi is max + 1 of the newest observation older than the oldest open transaction") {
  struct Row {
    const char* name;
    std::vector<CursorSample> samples;
    std::optional<SourceMicros> open_since;
    std::optional<std::int64_t> hi;
    std::optional<SourceMicros> forget_before;
    bool keeps_current;
  };
  const Row rows[] = {
      {"nothing open: the current max", {{kClock - 9 * kSecond, 10}}, std::nullopt, 51, kClock, true},
      {"open since before every observation", {{kClock - 9 * kSecond, 10}}, kClock - 20 * kSecond, std::nullopt,
       std::nullopt, true},
      {"the newest older one wins",
       {{kClock - 9 * kSecond, 10}, {kClock - 6 * kSecond, 20}, {kClock - 3 * kSecond, 30}},
       kClock - 5 * kSecond,
       21,
       kClock - 6 * kSecond,
       true},
      {"an observation at the very start does not count", {{kClock - 5 * kSecond, 20}}, kClock - 5 * kSecond,
       std::nullopt, std::nullopt, true},
      {"an observation from the future (clock went back) is ignored", {{kClock + 60 * kSecond, 90}},
       kClock - 1 * kSecond, std::nullopt, std::nullopt, true},
  };
  for (const Row& row : rows) {
    INFO(row.name);
    HorizonInput in = input_for(CursorType::Integer);
    if (row.open_since) in.reading.oldest = open_since(*row.open_since);
    in.reading.max_cursor = 50;
    in.samples = row.samples;
    const auto d = decide_horizon(in);
    REQUIRE(d);
    CHECK(d->value.has_value() == row.hi.has_value());
    if (row.hi && d->value) CHECK(d->value->raw == *row.hi);
    CHECK(d->forget_samples_before == row.forget_before);
    CHECK(d->keep_sample.has_value() == row.keeps_current);
    if (d->keep_sample) CHECK(d->keep_sample->max == 50);
  }
}

TEST_CASE("integer cursors: an empty table has no hi; the bigint maximum stands for no end") {
  HorizonInput empty = input_for(CursorType::Integer);
  const auto none = decide_horizon(empty);
  REQUIRE(none);
  CHECK_FALSE(none->value);
  CHECK_FALSE(none->keep_sample);

  HorizonInput full = input_for(CursorType::Integer);
  full.reading.max_cursor = std::numeric_limits<std::int64_t>::max();
  const auto end = decide_horizon(full);
  REQUIRE(end);
  REQUIRE(end->value);
  CHECK(end->value->raw == std::numeric_limits<std::int64_t>::max());
}

TEST_CASE("integer cursors: observations stop piling up at the cap while a transaction stays open") {
  HorizonInput in = input_for(CursorType::Integer, open_since(kClock - 5000 * kSecond));
  in.reading.max_cursor = 7;
  for (SourceMicros i = 0; i < static_cast<SourceMicros>(kMaxCursorSamples); ++i) {
    in.samples.push_back({kClock - 4000 * kSecond + i, 1});
  }
  const auto d = decide_horizon(in);
  REQUIRE(d);
  CHECK_FALSE(d->keep_sample);
}

TEST_CASE("an unknowable horizon is refused without a lookback, and accepted with one") {
  struct Row {
    const char* name;
    bool sees_all;
    bool standby;
    const char* unreported;
    const char* subscription;
    const char* says;
  };
  const Row rows[] = {
      {"role without pg_monitor", false, false, "", "", "pg_monitor"},
      {"standby without its primary", true, true, "", "", "primary:"},
      {"a session with track_activities off", true, false, "pid 7 (batch, user etl)", "", "track_activities"},
      {"a table written by logical replication", true, false, "", "orders_sub", "orders_sub"},
  };
  for (const Row& row : rows) {
    for (CursorType type : {CursorType::TimestampTz, CursorType::Integer}) {
      INFO(row.name);
      HorizonInput in = input_for(type);
      in.reading.max_cursor = 5;
      in.reading.sees_all_sessions = row.sees_all;
      in.reading.standby_without_primary = row.standby;
      in.reading.unreported_session = row.unreported;
      in.subscription = row.subscription;
      const auto refused = decide_horizon(in);
      REQUIRE_FALSE(refused);
      CHECK(refused.error().find(row.says) != std::string::npos);
      CHECK(refused.error().find(row.unreported) != std::string::npos);
      CHECK(refused.error().find("shop") != std::string::npos);
      CHECK(refused.error().find("set a lookback") != std::string::npos);
      // A table that takes no lookback (append) is not told to set one.
      in.takes_lookback = false;
      const auto no_way_out = decide_horizon(in);
      REQUIRE_FALSE(no_way_out);
      CHECK(no_way_out.error().find("set a lookback") == std::string::npos);
      CHECK(no_way_out.error().find("takes no lookback") != std::string::npos);
      in.has_lookback = true;
      const auto accepted = decide_horizon(in);
      REQUIRE(accepted);
      CHECK_FALSE(accepted->held_by.empty());  // status says what the horizon could not see
    }
  }
}

TEST_CASE("integer cursors: ids from a sequence with CACHE above 1 are refused without a lookback") {
  HorizonInput in = input_for(CursorType::Integer);
  in.reading.max_cursor = 11;
  in.reading.sequence_cache = 10;
  const auto refused = decide_horizon(in);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().find("CACHE 10") != std::string::npos);
  in.has_lookback = true;
  const auto accepted = decide_horizon(in);
  REQUIRE(accepted);
  REQUIRE(accepted->value);
  CHECK(accepted->value->raw == 12);
  CHECK(accepted->held_by.find("CACHE 10") != std::string::npos);
  // A time cursor's rows carry no ids: the same reading decides nothing differently.
  in = input_for(CursorType::TimestampTz);
  in.reading.sequence_cache = 10;
  CHECK(decide_horizon(in));
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("choosing hi: the decision in the cursor's type, floored to its precision, and a start above it") {
  using T = CursorType;
  const auto tz = [](SourceMicros m) { return CursorValue{T::TimestampTz, m}; };
  const auto wall = [](SourceMicros m) { return CursorValue{T::Timestamp, m}; };
  const auto id = [](std::int64_t v) { return CursorValue{T::Integer, v}; };
  constexpr SourceMicros kHour = 3600 * kSecond;
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  // An instant with microseconds: 999.149397 s after the epoch.
  constexpr SourceMicros kStamped = kClock - kSecond + 149'397;
  struct Row {
    const char* what;
    T type;
    std::optional<SourceMicros> instant;         // decision.instant
    std::optional<CursorValue> value;            // decision.value
    bool hold = false;                           // decision.hold_at_watermark
    std::optional<CursorValue> watermark;
    std::optional<CursorValue> initial;
    int digits = 6;
    std::optional<std::int64_t> max_cursor;      // reading.max_cursor
    std::optional<CursorValue> hi;               // expected
    bool ahead = false;
    const char* error = "";                      // a part of it; empty: none
    const char* held_by = "";                    // a part of it
    std::optional<std::int64_t> sequence_last = std::nullopt;  // reading.sequence_last
  };
  const Row rows[] = {
      {"timestamptz: the instant itself", T::TimestampTz, kStamped, {}, false, {}, {}, 6, {}, tz(kStamped)},
      {"timestamptz(3): floored to milliseconds", T::TimestampTz, kStamped, {}, false, {}, {}, 3, {},
       tz(kClock - kSecond + 149'000)},
      {"timestamptz(0): floored to seconds", T::TimestampTz, kStamped, {}, false, {}, {}, 0, {}, tz(kClock - kSecond)},
      {"timestamp: in the source session's zone (here UTC+2), then floored", T::Timestamp, kStamped, {}, false, {},
       {}, 3, {}, wall(kStamped + 2 * kHour - 397)},
      {"integer: the decided value", T::Integer, {}, id(11), false, {}, {}, 6, 10, id(11)},
      {"integer: an empty table has no hi", T::Integer, {}, {}, false, {}, {}, 6, {}, {}},
      {"a prepared transaction: hi is the stored watermark", T::TimestampTz, {}, {}, true, tz(kClock - 600 * kSecond),
       {}, 6, {}, tz(kClock - 600 * kSecond)},
      {"a prepared transaction before any watermark: no hi", T::TimestampTz, {}, {}, true, {}, {}, 6, {}, {}},
      {"a watermark above an older open transaction is held, not ahead", T::TimestampTz, kClock - 1800 * kSecond, {},
       false, tz(kClock - 600 * kSecond), {}, 6, {}, tz(kClock - 1800 * kSecond)},
      {"an initial above an older open transaction starts there", T::TimestampTz, kClock - 1800 * kSecond, {}, false,
       {}, tz(kClock - 600 * kSecond), 6, {}, tz(kClock - 1800 * kSecond)},
      {"a start just at the clock less the margin is held, not ahead", T::TimestampTz, kClock - 1800 * kSecond, {},
       false, tz(kClock - kSecond), {}, 6, {}, tz(kClock - 1800 * kSecond)},
      {"an initial ahead of the source's clock is refused", T::TimestampTz, kClock - kSecond, {}, false, {},
       tz(kClock + kHour), 6, {}, {}, false, "is ahead of the source's safe horizon"},
      {"a watermark ahead of the source's clock is reported, hi below it", T::TimestampTz, kClock - kSecond, {}, false,
       tz(kClock + kHour), {}, 6, {}, tz(kClock - kSecond), true, "", "tidemark rewind fixes"},
      {"a timestamp watermark ahead names a changed time zone", T::Timestamp, kClock - kSecond, {}, false,
       wall(kClock + 3 * kHour), {}, 6, {}, wall(kClock - kSecond + 2 * kHour), true, "", "if its time zone changed"},
      {"integer: a watermark above max + 1 is ahead", T::Integer, {}, id(40), false, id(100), {}, 6, 50, id(40), true},
      {"regression: an identity table whose newest rows were deleted is not ahead: its sequence handed them out",
       T::Integer, {}, id(51), false, id(100), {}, 6, 50, id(51), false, "", "", 99},
      {"integer: a watermark above what the sequence handed out is ahead (a restarted identity)", T::Integer, {},
       id(51), false, id(100), {}, 6, 50, id(51), true, "", "is ahead of the source's safe horizon", 50},
      {"integer: a watermark at max + 1, held lower, waits", T::Integer, {}, id(40), false, id(51), {}, 6, 50, id(40)},
      {"integer: max + 1 saturates at the bigint maximum", T::Integer, {}, id(40), false, id(kMax), {}, 6, kMax,
       id(40)},
  };
  for (const Row& row : rows) {
    CAPTURE(std::string(row.what));
    HiInput in;
    in.type = row.type;
    in.reading.clock = kClock;
    in.reading.max_cursor = row.max_cursor;
    in.reading.sequence_last = row.sequence_last;
    in.decision.instant = row.instant;
    in.decision.value = row.value;
    in.decision.hold_at_watermark = row.hold;
    in.decision.lag_seconds = 7;
    in.watermark = row.watermark;
    in.initial = row.initial;
    in.cursor_fraction_digits = row.digits;
    in.in_cursor_type = [&](SourceMicros instant) -> Result<CursorValue> {
      return CursorValue{row.type, instant + 2 * kHour};  // a zone two hours east of UTC
    };
    const auto chosen = choose_hi(in);
    if (*row.error != '\0') {
      REQUIRE_FALSE(chosen);
      CHECK(chosen.error_kind() == ErrorKind::Permanent);
      CHECK(chosen.error().find(row.error) != std::string::npos);
      continue;
    }
    REQUIRE(chosen);
    CHECK(chosen->hi == row.hi);
    CHECK(chosen->watermark_ahead == row.ahead);
    CHECK(chosen->held_by.find(row.held_by) != std::string::npos);
    // The lag is the decision's, but under a prepared transaction's hold:
    // the clock less the watermark it holds at.
    CHECK(chosen->lag_seconds == doctest::Approx(row.hold && row.watermark ? 600.0 : 7.0));
  }
}

}  // namespace tidemark
