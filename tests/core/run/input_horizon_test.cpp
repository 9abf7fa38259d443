// A table's horizon held at its inputs' watermarks, every kind of input,
// and which dependents a change below their work reaches; worked out by hand.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/run/input_horizon.h"
#include "core/time/instant_text.h"
#include "fake_ports.h"

namespace tidemark {
namespace {

SourceMicros micros(const char* text) {
  return std::chrono::duration_cast<std::chrono::microseconds>(parse_instant(text)->time_since_epoch()).count();
}

const TimeZone* berlin() { return date::locate_zone("Europe/Berlin"); }

TableRef input(const char* name, TableMode mode, const TimeZone* zone = date::locate_zone("UTC")) {
  return TableRef{"shop", name, mode, zone};
}

InputState watermark(CursorType type, std::int64_t raw, bool snapshot = false) {
  return InputState{StoredWatermark{CursorValue{type, raw}, snapshot}, std::nullopt};
}

InputState partitions_until(const char* text) { return InputState{std::nullopt, *parse_instant(text)}; }

}  // namespace

TEST_CASE("each kind of input bounds a table at the instant below which its target holds every row") {
  struct Row {
    const char* name;
    TableRef input;
    InputState state;
    const char* expected;  // the bound as an instant; "-" for none
  };
  const Row rows[] = {
      {"a timestamptz watermark is its instant", input("orders", TableMode::Incremental),
       watermark(CursorType::TimestampTz, micros("2026-12-05T23:58:10Z")), "2026-12-05T23:58:10Z"},
      {"a timestamp watermark is its wall clock in the input's zone",
       input("orders", TableMode::Incremental, berlin()),
       watermark(CursorType::Timestamp, micros("2026-12-05T23:58:10Z")), "2026-12-05T22:58:10Z"},
      {"a timestamp in the hour summer time skips is the end of the gap",
       input("orders", TableMode::Incremental, berlin()),
       watermark(CursorType::Timestamp, micros("2026-03-29T02:30:00Z")), "2026-03-29T01:00:00Z"},
      {"a date watermark is that local day's first instant", input("orders", TableMode::Incremental, berlin()),
       watermark(CursorType::Date, 20'000), "2024-10-03T22:00:00Z"},
      {"a snapshot input's time", input("countries", TableMode::Snapshot),
       watermark(CursorType::TimestampTz, micros("2026-12-06T00:01:00Z"), true), "2026-12-06T00:01:00Z"},
      {"a partition input: the end of its done partitions", input("daily", TableMode::Partition),
       partitions_until("2026-12-05T23:00:00Z"), "2026-12-05T23:00:00Z"},
      {"an input that has loaded nothing", input("orders", TableMode::Incremental), InputState{}, "-"},
      {"a partition input with none done", input("daily", TableMode::Partition), InputState{}, "-"},
      {"an incremental input with a lookback claims its rows that far below its watermark",
       TableRef{"shop", "orders", TableMode::Incremental, date::locate_zone("UTC"),
                CursorSpan{CursorSpan::Kind::Duration, 3600}},
       watermark(CursorType::TimestampTz, micros("2026-12-05T23:58:10Z")), "2026-12-05T22:58:10Z"},
  };
  for (const Row& row : rows) {
    INFO(std::string(row.name));
    const auto bound = input_bound(row.input, row.state);
    REQUIRE(bound);
    const std::string got = *bound ? cursor_to_text(CursorValue{CursorType::TimestampTz, **bound}) : "-";
    CHECK(got == row.expected);
  }
}

TEST_CASE("a table with inputs refuses a standby source without its primary, whose replay may lag them") {
  TableConfig table;
  table.inputs = {input("orders", TableMode::Incremental)};
  HorizonReading reading;
  CHECK_FALSE(refuse_inputs_on(reading, table));
  reading.standby_without_primary = true;
  const auto refused = refuse_inputs_on(reading, table);
  REQUIRE(refused);
  CHECK(refused->kind == ErrorKind::Permanent);
  CHECK(refused->message.find("hot standby without a primary: connection") != std::string::npos);
  CHECK(refused->message.find("(shop.orders)") != std::string::npos);
  table.inputs.clear();
  CHECK_FALSE(refuse_inputs_on(reading, table));
}

TEST_CASE("an input with an integer cursor bounds no time: refused, naming it and the fix") {
  const auto bound = input_bound(input("events", TableMode::Incremental), watermark(CursorType::Integer, 42));
  REQUIRE_FALSE(bound);
  CHECK(bound.error_kind() == ErrorKind::Permanent);
  CHECK(bound.error() ==
        "input shop.events has an integer cursor: its watermark (42) is an id, which says nothing of time, so it "
        "cannot bound this table; remove it from inputs, or give it a time cursor");
}

TEST_CASE("the inputs hold the source's horizon at the least of their bounds, and say which") {
  const SourceMicros clock = micros("2026-12-06T00:05:00Z");
  struct Row {
    const char* name;
    std::vector<TableRef> inputs;
    std::vector<InputState> states;
    std::optional<SourceMicros> source_instant;  // the source's own horizon; nothing: a prepared transaction
    // What comes out:
    const char* instant;  // "-": none, "hold": held at the watermark
    const char* held_by;
    std::optional<double> wait;
  };
  const Row rows[] = {
      {"no inputs: the source decides", {}, {}, micros("2026-12-06T00:04:59Z"), "2026-12-06T00:04:59Z", "", {}},
      {"an input behind the source holds it", {input("orders", TableMode::Incremental)},
       {watermark(CursorType::TimestampTz, micros("2026-12-05T23:58:10Z"))}, micros("2026-12-06T00:04:59Z"),
       "2026-12-05T23:58:10Z", "waiting for shop.orders, at 2026-12-05T23:58:10Z", 409.0},
      {"an input ahead of the source holds nothing", {input("orders", TableMode::Incremental)},
       {watermark(CursorType::TimestampTz, micros("2026-12-06T00:10:00Z"))}, micros("2026-12-06T00:04:59Z"),
       "2026-12-06T00:04:59Z", "", {}},
      {"the least of two, named",
       {input("orders", TableMode::Incremental), input("daily", TableMode::Partition)},
       {watermark(CursorType::TimestampTz, micros("2026-12-06T00:03:00Z")), partitions_until("2026-12-05T00:00:00Z")},
       micros("2026-12-06T00:04:59Z"), "2026-12-05T00:00:00Z", "waiting for shop.daily, at 2026-12-05T00:00:00Z",
       86699.0},
      {"an input that has loaded nothing holds everything",
       {input("orders", TableMode::Incremental), input("daily", TableMode::Partition)},
       {watermark(CursorType::TimestampTz, micros("2026-12-06T00:03:00Z")), InputState{}},
       micros("2026-12-06T00:04:59Z"), "hold", "waiting for shop.daily, which has loaded nothing yet", 0.0},
      {"a prepared transaction on the source holds it first", {input("orders", TableMode::Incremental)},
       {watermark(CursorType::TimestampTz, micros("2026-12-05T23:58:10Z"))}, std::nullopt, "hold", "prepared", {}},
  };
  for (const Row& row : rows) {
    INFO(std::string(row.name));
    HorizonDecision decision;
    if (row.source_instant) {
      decision.instant = *row.source_instant;
      decision.lag_seconds = static_cast<double>(clock - *row.source_instant) / 1e6;
    } else {
      decision.hold_at_watermark = true;
      decision.held_by = "prepared";
    }
    const auto limit = inputs_limit(row.inputs, row.states);
    REQUIRE(limit);
    const std::optional<double> wait = hold_for_inputs(decision, *limit, clock);
    const std::string instant = decision.hold_at_watermark ? "hold"
                                : decision.instant ? cursor_to_text(CursorValue{CursorType::TimestampTz, *decision.instant})
                                                   : "-";
    CHECK(instant == row.instant);
    CHECK(decision.held_by == row.held_by);
    CHECK(wait == row.wait);
    if (row.wait && *row.wait > 0) {
      CHECK(decision.lag_seconds == doctest::Approx(static_cast<double>(clock - *decision.instant) / 1e6));
    }
  }
}

TEST_CASE("a change below the dependents' work flags only the partition tables among them") {
  PipelineConfig shop;
  shop.name = "shop";
  TableConfig orders;
  orders.name = "orders";
  const Instant from = *parse_instant("2026-12-03T00:00:00Z");
  CHECK_FALSE(downstream_recheck(shop, orders, from, "rewound to 2026-12-03T00:00:00Z"));
  orders.dependents = {TableRef{"marts", "daily_revenue", TableMode::Partition, nullptr},
                       TableRef{"marts", "order_lines", TableMode::Incremental, nullptr},
                       TableRef{"marts", "weekly", TableMode::Partition, nullptr}};
  const auto recheck = downstream_recheck(shop, orders, from, "rewound to 2026-12-03T00:00:00Z");
  REQUIRE(recheck);
  CHECK(recheck->tables ==
        std::vector<TableKey>{TableKey{"marts", "daily_revenue"}, TableKey{"marts", "weekly"}});
  CHECK(recheck->from == from);
  CHECK(recheck->because == "input shop.orders rewound to 2026-12-03T00:00:00Z");
}

TEST_CASE("a run tells the dependents only when it committed something") {
  struct Row {
    const char* name;
    bool partitions;
    int chunks;
    std::optional<std::int64_t> before;
    std::optional<std::int64_t> after;
    bool with_dependents;
    bool announced;
  };
  const Row rows[] = {
      {"a watermark moved", false, 1, 10, 20, true, true},
      {"a watermark moved without rows", false, 0, 10, 20, true, true},
      {"a first watermark", false, 0, std::nullopt, 20, true, true},
      {"nothing moved", false, 0, 10, 10, true, false},
      {"partitions written", true, 2, std::nullopt, std::nullopt, true, true},
      {"no partition written", true, 0, std::nullopt, std::nullopt, true, false},
      {"no dependents", false, 1, 10, 20, false, false},
  };
  for (const Row& row : rows) {
    INFO(std::string(row.name));
    FakeState state;
    TableConfig table;
    if (row.with_dependents) table.dependents = {TableRef{"m", "d", TableMode::Partition, nullptr}};
    RunSummary summary;
    summary.table = TableKey{"p", "t"};
    summary.partitions = row.partitions;
    summary.chunks = row.chunks;
    if (row.before) summary.watermark_before = CursorValue{CursorType::Integer, *row.before};
    if (row.after) summary.watermark_after = CursorValue{CursorType::Integer, *row.after};
    announce_to_dependents(table, summary, state);
    CHECK(state.announced.size() == (row.announced ? 1u : 0u));
  }
}

}  // namespace tidemark
