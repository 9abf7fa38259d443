// How far a job's copies have got: the rows and bytes its source sessions
// have streamed so far. Made by the job runner for one job; written by the
// thread that runs it, read by any (a progress line, a scrape, the state's
// progress rows): relaxed atomics, since a reader wants a recent value,
// never an exact one.
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

 private:
  std::atomic<std::int64_t> rows_{0};
  std::atomic<std::int64_t> bytes_{0};
};

}  // namespace tidemark
