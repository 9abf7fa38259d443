// Readings of a source's clock and open transactions, shared for a moment
// by the runs of that source's tables: every table of a source reads the
// same ones, and at many tables a firing fires them together. An earlier
// reading only holds a run's hi lower (a transaction begun since began
// after its clock), so it may serve; a reading taken after the table's
// watermark was is required (Source::read_horizon's shared_after), or the
// watermark would look ahead. One per daemon, shared by its workers;
// thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "core/watermark/safe_horizon.h"

namespace tidemark {

class SourceMoments {
 public:
  // The latest reading of `source` (a database, named as its sessions'
  // endpoints), when it is younger than kServeFor and its clock later than
  // `after`.
  std::optional<HorizonReading> recent(const std::string& source, SourceMicros after) const;
  // Keeps `reading` unless a later one is kept already.
  void keep(const std::string& source, const HorizonReading& reading);

  // A reading this old adds at most this much to a run's horizon lag.
  static constexpr std::chrono::milliseconds kServeFor{500};

 private:
  struct Entry {
    HorizonReading reading;
    std::chrono::steady_clock::time_point taken;
  };
  mutable std::mutex mutex_;
  std::map<std::string, Entry> latest_;
};

}  // namespace tidemark
