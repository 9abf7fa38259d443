#include <doctest/doctest.h>

#include "core/schedule/firing_plan.h"
#include "schedule_test_config.h"

namespace tidemark {

using testing::at;
using testing::hourly_config;

TEST_CASE("missed firings: once at start-up, and only for tables that have run before") {
  const Config config = hourly_config();
  const PipelineConfig& p = config.pipelines[0];
  const TableConfig& t = p.tables[0];
  CHECK_FALSE(missed_firing(p, t, std::nullopt, at("2026-01-01T10:30:00Z")));           // never ran: wait
  CHECK_FALSE(missed_firing(p, t, at("2026-01-01T10:00:00Z"), at("2026-01-01T10:59:59Z")));  // none missed
  CHECK(missed_firing(p, t, at("2026-01-01T10:00:00Z"), at("2026-01-01T11:00:00Z")));   // exactly one due
  CHECK(missed_firing(p, t, at("2026-01-01T10:00:00Z"), at("2026-01-03T09:00:00Z")));   // many missed: still one run
  CHECK(format_instant(*next_firing(p, t, at("2026-01-01T10:00:00Z"))) == "2026-01-01T11:00:00Z");
}

TEST_CASE("retries back off and never wait past the next firing") {
  CHECK(retry_backoff(1) == std::chrono::seconds(10));
  CHECK(retry_backoff(2) == std::chrono::seconds(20));
  CHECK(retry_backoff(5) == std::chrono::seconds(160));
  CHECK(retry_backoff(6) == std::chrono::seconds(300));
  CHECK(retry_backoff(1000) == std::chrono::seconds(300));
  CHECK(format_instant(retry_at(at("2026-01-01T10:00:00Z"), 3, at("2026-01-01T11:00:00Z"))) == "2026-01-01T10:00:40Z");
  CHECK(format_instant(retry_at(at("2026-01-01T10:59:50Z"), 3, at("2026-01-01T11:00:00Z"))) == "2026-01-01T11:00:00Z");
}

}  // namespace tidemark
