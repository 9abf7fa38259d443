// Whether a table's watermark is fresh, too old or ahead of its source:
// the one definition of its age and its stale flag, which `tidemark
// status` and the watermark gauges both print. Pure: it is given the
// state and the now of one clock (the state database's, read with that
// state) and reads no clock itself. Thread-safe.
#pragma once

#include <chrono>
#include <optional>

namespace tidemark {

// What the state database says about a table's watermark. Times are Unix
// seconds on the state database's clock, like the `now` they are compared
// with.
struct WatermarkReading {
  // The watermark as an instant: time cursors, and a partition table's
  // end of its last done partition. Nothing for integer cursors.
  std::optional<double> watermark_unix;
  // When the watermark last moved (for a partition table: when a
  // partition was last marked done).
  std::optional<double> moved_unix;
  // The last finished run found the stored watermark above the source's
  // safe horizon.
  bool ahead_of_source = false;
};

// Why a watermark is stale, or that it is not.
enum class Staleness {
  Fresh,          // younger than stale_after, or not known at all
  TooOld,         // age above stale_after
  AheadOfSource,  // the last run found it above the source's safe horizon
  AheadOfClock,   // above `now` by more than kAheadToleranceSeconds
};

struct WatermarkHealth {
  // now minus the watermark; for integer cursors now minus when it last
  // moved. Nothing when neither is known (a table that never ran).
  std::optional<double> age_seconds;
  Staleness why = Staleness::Fresh;

  bool stale() const { return why != Staleness::Fresh; }
  // Ahead claims rows that do not exist yet: stale, and shown as AHEAD.
  bool ahead() const { return why == Staleness::AheadOfSource || why == Staleness::AheadOfClock; }
};

// The table's age and stale flag at `now_unix`, against its `stale_after`.
// Being ahead wins over being old: a watermark past the source's clock is
// the more urgent claim to correct. A table with no known age is not
// stale (it waits for its first run). Never fails.
WatermarkHealth assess_watermark(const WatermarkReading& reading, double now_unix, std::chrono::seconds stale_after);

// The name of a Staleness value, for logs and tests: "fresh", "too old",
// "ahead of the source", "ahead of the clock".
const char* staleness_name(Staleness why);

}  // namespace tidemark
