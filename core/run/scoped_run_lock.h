// A run's advisory lock (the table's or one partition's), held for the
// life of this object and released when it ends, on every path. Owned by
// the run that took it, on that run's thread.
#pragma once

#include "core/run/run_ports.h"

namespace tidemark {

class ScopedRunLock {
 public:
  ScopedRunLock(StateStore& state, RunLock lock) : state_(state), lock_(std::move(lock)) {}
  ~ScopedRunLock() { release(); }
  ScopedRunLock(const ScopedRunLock&) = delete;
  ScopedRunLock& operator=(const ScopedRunLock&) = delete;

  // Takes the lock (waiting only when `wait`); true when held, false when
  // held elsewhere; fails when the store cannot be asked.
  Result<bool> acquire(bool wait);
  // Releases it now, if held.
  void release();
  bool held() const { return held_; }
  const RunLock& lock() const { return lock_; }

 private:
  StateStore& state_;
  RunLock lock_;
  bool held_ = false;
};

}  // namespace tidemark
