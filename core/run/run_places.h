// The daemon's places for sessions' work: max_concurrent_runs of them,
// taken by runs and by the helpers that read a run's ranges beside it
// (RangeCrew), so that helpers never put more work on the databases than
// the operator allowed. Owned by the daemon's worker launcher; thread-safe.
#pragma once

#include <condition_variable>
#include <mutex>

namespace tidemark {

class RunPlaces {
 public:
  explicit RunPlaces(int places);

  // A run takes a place, waiting while helpers hold the last ones: each
  // lets go before its next range (run_waiting), so a run waits at most
  // one range.
  void enter_run();
  void leave_run();
  // A helper takes a free place, never waiting: false when none is free,
  // or a run waits for one.
  bool try_enter_helper();
  void leave_helper();
  // Whether a run waits for a place a helper holds.
  bool run_waiting() const;

 private:
  const int places_;
  mutable std::mutex mutex_;
  std::condition_variable freed_;
  int taken_ = 0;
  int runs_waiting_ = 0;
};

}  // namespace tidemark
