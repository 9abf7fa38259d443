// A flag a run checks between steps: set by whoever wants it to stop
// (shutdown after the grace period). Shared by pointer; thread-safe.
#pragma once

#include <atomic>

namespace tidemark {

class CancelToken {
 public:
  void cancel() { cancelled_.store(true, std::memory_order_relaxed); }
  bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> cancelled_{false};
};

}  // namespace tidemark
