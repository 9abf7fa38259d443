#include "core/schedule/catch_up.h"

#include <doctest/doctest.h>

#include <algorithm>

#include "schedule_test_config.h"

namespace tidemark {
namespace {

using testing::at;
using testing::hourly_config;
using Answer = TableHistory::Answer;

TEST_CASE("catch-up on gaining a table: each case the fleet's fixes pinned") {
  const Config config = hourly_config();
  const PipelineConfig& p = config.pipelines[0];
  const TableConfig& t = p.tables[0];
  const Instant now = at("2026-01-01T11:30:00Z");
  const Instant before_last_firing = at("2026-01-01T10:59:00Z");  // the 11:00 firing fell after it
  const Instant after_last_firing = at("2026-01-01T11:00:05Z");   // another member ran the 11:00 firing

  struct Case {
    const char* why;
    SkippedFiring skipped;
    TableHistory history;
    bool runs;
  };
  const Case cases[] = {
      // A takeover: the history alone decides whether the lost owner missed a firing.
      {"takeover, a firing fell after the table's last run", SkippedFiring::None, {Answer::Ran, before_last_firing}, true},
      {"takeover, the last firing was run", SkippedFiring::None, {Answer::Ran, after_last_firing}, false},
      {"takeover of a table that never ran: it waits for its first firing", SkippedFiring::None, {Answer::NeverRan, {}},
       false},
      {"takeover without a history", SkippedFiring::None, {Answer::NotRead, {}}, false},
      // 221d279: a skip while the lease lapsed is caught up once owned again,
      // even through views that decided nothing and without a history.
      {"lapsed lease, no history read", SkippedFiring::LeaseLapsed, {Answer::NotRead, {}}, true},
      {"lapsed lease, the table added by a reload since", SkippedFiring::LeaseLapsed, {Answer::NotAsked, {}}, true},
      // de76fc9: a lapsed member's skip of a never-run table is caught up.
      {"lapsed lease, a table that never ran", SkippedFiring::LeaseLapsed, {Answer::NeverRan, {}}, true},
      {"lapsed lease, but the history shows the firing run since", SkippedFiring::LeaseLapsed,
       {Answer::Ran, after_last_firing}, false},
      // a5d91ef: a firing that came while joining runs once owned, unless
      // another member ran it since; a never-run table's first firing is not dropped.
      {"joining, a table that never ran", SkippedFiring::Undecided, {Answer::NeverRan, {}}, true},
      {"joining, another member ran the firing since", SkippedFiring::Undecided, {Answer::Ran, after_last_firing},
       false},
      {"joining, a firing fell after the last run", SkippedFiring::Undecided, {Answer::Ran, before_last_firing}, true},
      // ba164eb: not when the history could not be read, nor for a table a
      // reload added after the history was asked for.
      {"joining, no history read", SkippedFiring::Undecided, {Answer::NotRead, {}}, false},
      {"joining, the table added by a reload since", SkippedFiring::Undecided, {Answer::NotAsked, {}}, false},
  };
  for (const Case& c : cases) {
    CAPTURE(c.why);
    CHECK(catch_up_on_gain(c.skipped, c.history, p, t, JobKind::Load, now) == c.runs);
  }
}

TEST_CASE("catch-up: a later skip keeps the stronger reason") {
  CHECK(std::max(SkippedFiring::LeaseLapsed, SkippedFiring::Undecided) == SkippedFiring::LeaseLapsed);
  CHECK(std::max(SkippedFiring::None, SkippedFiring::Undecided) == SkippedFiring::Undecided);
}

}  // namespace
}  // namespace tidemark
