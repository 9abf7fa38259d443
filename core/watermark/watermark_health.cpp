#include "core/watermark/watermark_health.h"

#include "core/watermark/safe_horizon.h"

namespace tidemark {

WatermarkHealth assess_watermark(const WatermarkReading& reading, double now_unix, std::chrono::seconds stale_after) {
  WatermarkHealth out;
  // Integer cursors have no instant: how long the watermark has stood
  // still is what a person reading "age" wants to know.
  const std::optional<double> reference = reading.watermark_unix ? reading.watermark_unix : reading.moved_unix;
  if (reference) out.age_seconds = now_unix - *reference;
  if (reading.ahead_of_source) {
    out.why = Staleness::AheadOfSource;
  } else if (reading.watermark_unix && *reading.watermark_unix - now_unix > kAheadToleranceSeconds) {
    // Clocks of hosts differ a little, so only well past `now` counts;
    // the run compares with the source's horizon exactly.
    out.why = Staleness::AheadOfClock;
  } else if (out.age_seconds && *out.age_seconds > static_cast<double>(stale_after.count())) {
    out.why = Staleness::TooOld;
  }
  return out;
}

const char* staleness_name(Staleness why) {
  switch (why) {
    case Staleness::Fresh: return "fresh";
    case Staleness::TooOld: return "too old";
    case Staleness::AheadOfSource: return "ahead of the source";
    case Staleness::AheadOfClock: return "ahead of the clock";
  }
  return "fresh";
}

}  // namespace tidemark
