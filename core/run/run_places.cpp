#include "core/run/run_places.h"

#include <cstdlib>

namespace tidemark {

RunPlaces::RunPlaces(int places) : places_(places) {
  if (places < 1) std::abort();  // max_concurrent_runs is at least 1
}

void RunPlaces::enter_run() {
  std::unique_lock<std::mutex> lock(mutex_);
  ++runs_waiting_;
  freed_.wait(lock, [&] { return taken_ < places_; });
  --runs_waiting_;
  if (yielding_ > 0) --yielding_;
  ++taken_;
}

void RunPlaces::leave_run() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (taken_ == 0) std::abort();  // left more often than entered
    --taken_;
  }
  freed_.notify_all();
}

bool RunPlaces::try_enter_helper() {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (runs_waiting_ > 0 || taken_ >= places_) return false;
  ++taken_;
  return true;
}

void RunPlaces::leave_helper() { leave_run(); }

bool RunPlaces::yield_to_run() {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (runs_waiting_ <= yielding_) return false;
  ++yielding_;
  return true;
}

}  // namespace tidemark
