// Age and stale, table-driven: the rows come from the rules (age is now
// minus the watermark, or minus the last move for integer cursors; stale
// past stale_after or ahead), not from running the code.
#include <doctest/doctest.h>

#include <string>

#include "core/watermark/watermark_health.h"

namespace tidemark {

TEST_CASE("watermark age and stale against one clock") {
  const std::optional<double> none;
  struct Row {
    const char* name;
    std::optional<double> watermark, moved;
    bool ahead_of_source;
    double now;
    std::int64_t stale_after;
    std::optional<double> age;
    Staleness why;
  };
  const Row rows[] = {
      {"a table that never ran has no age and is not stale", none, none, false, 10000, 3600, none,
       Staleness::Fresh},
      {"a young time watermark is fresh", 8200, 9000, false, 10000, 3600, 1800, Staleness::Fresh},
      {"age is measured from the watermark, not from its last move", 1000, 9990, false, 10000, 3600, 9000,
       Staleness::TooOld},
      {"exactly stale_after old is not yet stale", 6400, 6400, false, 10000, 3600, 3600, Staleness::Fresh},
      {"a fraction past stale_after is stale", 6399.5, 6399.5, false, 10000, 3600, 3600.5, Staleness::TooOld},
      {"integer cursors: age since the last move", none, 2800, false, 10000, 7200, 7200, Staleness::Fresh},
      {"integer cursors: stale when it stood still too long", none, 2799, false, 10000, 7200, 7201,
       Staleness::TooOld},
      {"the last run found it above the source's horizon", 9990, 9990, true, 10000, 3600, 10,
       Staleness::AheadOfSource},
      {"ahead of the source wins over too old", 1000, 1000, true, 10000, 3600, 9000, Staleness::AheadOfSource},
      {"within the clock tolerance is not ahead", 10060, 10000, false, 10000, 3600, -60, Staleness::Fresh},
      {"past the clock tolerance is ahead", 10061, 10000, false, 10000, 3600, -61, Staleness::AheadOfClock},
      {"integer cursors are never ahead of a clock", none, 20000, false, 10000, 3600, -10000, Staleness::Fresh},
  };
  for (const Row& row : rows) {
    CAPTURE(row.name);
    WatermarkReading reading;
    reading.watermark_unix = row.watermark;
    reading.moved_unix = row.moved;
    reading.ahead_of_source = row.ahead_of_source;
    const WatermarkHealth health = assess_watermark(reading, row.now, std::chrono::seconds(row.stale_after));
    CHECK(health.age_seconds == row.age);
    CHECK(std::string(staleness_name(health.why)) == staleness_name(row.why));
    CHECK(health.stale() == (row.why != Staleness::Fresh));
    CHECK(health.ahead() == (row.why == Staleness::AheadOfSource || row.why == Staleness::AheadOfClock));
  }
}

}  // namespace tidemark
