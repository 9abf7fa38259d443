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

  // A run takes a place, waiting while helpers hold the last ones: as
  // many helpers as runs wait let go before their next range
  // (yield_to_run).
  void enter_run();
  void leave_run();
  // A helper takes a free place, never waiting: false when none is free,
  // or a run waits for one.
  bool try_enter_helper();
  void leave_helper();
  // Whether this helper is to let go of its place for a run that waits:
  // true for one helper per run waiting, until that run has a place.
  bool yield_to_run();

 private:
  const int places_;
  std::mutex mutex_;
  std::condition_variable freed_;
  int taken_ = 0;
  int runs_waiting_ = 0;
  int yielding_ = 0;  // helpers told to let go, for runs not yet in
};

}  // namespace tidemark
