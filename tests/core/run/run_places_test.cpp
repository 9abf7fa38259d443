// RunPlaces: runs and range helpers share max_concurrent_runs places; a
// helper takes only a free one, never one a run waits for, and as many
// helpers as runs wait let go of theirs.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>

#include "core/run/run_places.h"

namespace tidemark {

TEST_CASE("run places: helpers take only places no run holds, and one lets go for each run that waits") {
  RunPlaces places(3);
  places.enter_run();
  CHECK(places.try_enter_helper());
  CHECK(places.try_enter_helper());
  CHECK_FALSE(places.try_enter_helper());  // three taken: one run, two helpers
  CHECK_FALSE(places.yield_to_run());      // no run waits

  // A run started now waits for a helper to let go: one helper is told
  // to, the other goes on.
  std::atomic<bool> entered{false};
  std::thread run([&] {
    places.enter_run();
    entered = true;
  });
  while (!places.yield_to_run()) std::this_thread::yield();
  CHECK_FALSE(places.yield_to_run());  // one is enough
  CHECK_FALSE(places.try_enter_helper());
  CHECK_FALSE(entered.load());
  places.leave_helper();
  run.join();
  CHECK(entered.load());
  CHECK_FALSE(places.yield_to_run());
  CHECK_FALSE(places.try_enter_helper());  // two runs and a helper: full

  places.leave_run();
  CHECK(places.try_enter_helper());
  places.leave_helper();
  places.leave_helper();
  places.leave_run();
  CHECK(places.try_enter_helper());
  CHECK(places.try_enter_helper());
  CHECK(places.try_enter_helper());
}

}  // namespace tidemark
