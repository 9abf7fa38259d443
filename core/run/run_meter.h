// How far a job's copies have got: the rows and bytes its source sessions
// have streamed so far, and the share of a ranged first load's ranges.
// Made by the job runner for one job; written by the thread that runs it,
// read by any (a progress line, a scrape, the state's progress rows):
// relaxed atomics, since a reader wants a recent value, never an exact one.
#pragma once

#include <atomic>
#include <cstdint>

namespace tidemark {

class RunMeter {
 public:
  void add(std::int64_t rows, std::int64_t bytes) {
    rows_.fetch_add(rows, std::memory_order_relaxed);
    bytes_.fetch_add(bytes, std::memory_order_relaxed);
  }
  std::int64_t rows() const { return rows_.load(std::memory_order_relaxed); }
  std::int64_t bytes() const { return bytes_.load(std::memory_order_relaxed); }

  // A ranged first load's ranges committed, of all it planned.
  void set_ranges(std::int64_t done, std::int64_t all) {
    share_.store(all > 0 ? static_cast<double>(done) / static_cast<double>(all) : 0, std::memory_order_relaxed);
  }
  // Their share, 0 to 1; 0 for a job that loads no ranges.
  double ranges_share() const { return share_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::int64_t> rows_{0};
  std::atomic<std::int64_t> bytes_{0};
  std::atomic<double> share_{0};
};

}  // namespace tidemark
