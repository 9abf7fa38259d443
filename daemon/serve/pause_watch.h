// Keeps this member's pauses current: a thread that reads them
// (PauseBook) on a state session of its own, opened again after a
// failure, once at start, at once when `pause` or `resume` announces a
// change (LISTEN), and every kPollEvery besides, for a pause written
// without the announcement (by hand, in SQL). It hands every reading that
// differs from the last, and every catch-up resume, to `on_pauses`; the
// first reading always. Owns one thread; public methods are thread-safe;
// `on_pauses` is called on that thread.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/config/config_model.h"
#include "core/schedule/pause_set.h"

namespace tidemark {

class PauseWatch {
 public:
  using OnPauses = std::function<void(PauseSet, std::vector<CatchUpResume>)>;

  // A pause written without its announcement is obeyed within this.
  static constexpr std::chrono::seconds kPollEvery{5};

  explicit PauseWatch(OnPauses on_pauses) : on_pauses_(std::move(on_pauses)) {}
  ~PauseWatch() { stop(); }
  PauseWatch(const PauseWatch&) = delete;
  PauseWatch& operator=(const PauseWatch&) = delete;

  // Starts the thread at the first call; a reload's configuration takes
  // the place of the one before (its state database may have moved).
  void set_config(std::shared_ptr<const Config> config);
  // Ends the thread; idempotent.
  void stop();

 private:
  void loop();

  OnPauses on_pauses_;
  std::mutex mutex_;
  std::shared_ptr<const Config> config_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace tidemark
