// Window planning, table-driven. Integer cursors keep the arithmetic
// readable; the rules are the same for time cursors.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/watermark/window_plan.h"

namespace tidemark {
namespace {

std::optional<CursorValue> n(std::optional<std::int64_t> v) {
  if (!v) return std::nullopt;
  return CursorValue{CursorType::Integer, *v};
}

std::string describe(const WindowPlan& plan) {
  std::string out;
  std::optional<Window> chunk;
  while ((chunk = plan.chunk_after(chunk))) {
    out += "[" + std::to_string(chunk->lo.raw) + "," + std::to_string(chunk->hi.raw) + ")->" +
           std::to_string(plan.watermark_after(*chunk).raw) + " ";
  }
  const auto idle = plan.watermark_without_chunks();
  out += "idle:" + (idle ? std::to_string(idle->raw) : std::string("none"));
  return out;
}

}  // namespace

TEST_CASE("window plans") {
  const std::optional<std::int64_t> none;
  struct Row {
    const char* name;
    std::optional<std::int64_t> watermark, initial, source_min, hi;
    std::int64_t lookback;
    std::optional<std::int64_t> max_window;
    const char* expected;
  };
  const Row rows[] = {
      {"first load reads the whole history", none, none, 10, 50, 0, none, "[10,50)->50 idle:50"},
      {"first load starts at initial", none, 30, 10, 50, 0, none, "[30,50)->50 idle:50"},
      {"later runs start at watermark - lookback", 40, none, none, 60, 5, none, "[35,60)->60 idle:60"},
      {"max_window cuts chunks; each moves the watermark", none, 0, none, 25, 0, 10,
       "[0,10)->10 [10,20)->20 [20,25)->25 idle:25"},
      {"a lookback chunk below the watermark leaves it", 40, none, none, 60, 15, 10,
       "[25,35)->40 [35,45)->45 [45,55)->55 [55,60)->60 idle:60"},
      {"hi below the watermark (old open transaction): re-read, never regress", 40, none, none, 38, 5, none,
       "[35,38)->40 idle:40"},
      {"hi below watermark - lookback: nothing to read, nothing moves back", 40, none, none, 30, 5, none,
       "idle:40"},
      {"empty source (integer cursor): nothing, watermark kept", 40, none, none, none, 0, none, "idle:40"},
      {"empty source on a first run: no watermark yet", none, none, none, none, 0, none, "idle:none"},
      {"empty source with a clock hi moves the first watermark to hi", none, none, none, 70, 0, none, "idle:70"},
      {"initial ahead of hi is kept, not replaced by hi", none, 100, 10, 50, 0, none, "idle:100"},
      {"window exactly one chunk", 0, none, none, 10, 0, 10, "[0,10)->10 idle:10"},
  };
  for (const Row& row : rows) {
    INFO(std::string(row.name));
    WindowPlanInput input;
    input.watermark = n(row.watermark);
    input.initial = n(row.initial);
    input.source_min = n(row.source_min);
    input.hi = n(row.hi);
    input.lookback = {CursorSpan::Kind::Count, row.lookback};
    if (row.max_window) input.max_window = CursorSpan{CursorSpan::Kind::Count, *row.max_window};
    const auto plan = WindowPlan::make(input);
    REQUIRE(plan.ok());
    CHECK(describe(*plan) == row.expected);
  }
}

TEST_CASE("a span that does not fit the cursor type is an error, not a guess") {
  WindowPlanInput input;
  input.watermark = CursorValue{CursorType::Integer, 10};
  input.hi = CursorValue{CursorType::Integer, 20};
  input.lookback = {CursorSpan::Kind::Duration, 3600};
  const auto plan = WindowPlan::make(input);
  REQUIRE_FALSE(plan.ok());
  CHECK(plan.error().find("lookback: an integer cursor needs a count") != std::string::npos);

  input.lookback = {CursorSpan::Kind::Count, 0};
  input.max_window = CursorSpan{CursorSpan::Kind::Duration, 60};
  CHECK(WindowPlan::make(input).error().find("max_window") != std::string::npos);
}

}  // namespace tidemark
