#include "daemon/pg/data/source_moments.h"

namespace tidemark {

std::optional<HorizonReading> SourceMoments::recent(const std::string& source, SourceMicros after) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto it = latest_.find(source);
  if (it == latest_.end() || !(it->second.reading.clock > after)) return std::nullopt;
  if (std::chrono::steady_clock::now() - it->second.taken > kServeFor) return std::nullopt;
  return it->second.reading;
}

void SourceMoments::keep(const std::string& source, const HorizonReading& reading) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  const auto it = latest_.find(source);
  // Two runs that read at once keep the later: an earlier one must not
  // replace it while it serves, or a run could be served a reading older
  // than its watermark's.
  if (it != latest_.end() && it->second.reading.clock >= reading.clock && now - it->second.taken <= kServeFor) return;
  latest_[source] = Entry{reading, now};
}

}  // namespace tidemark
