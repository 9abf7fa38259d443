// The facts /healthz and /readyz are decided on (core/health/daemon_health):
// the event loop's last beat, whether the configuration is loaded, whether
// the daemon is stopping, and the state monitor's last check of the state
// database. Written by the loop and the state monitor, read by the HTTP
// endpoint's thread; every method is thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>

#include "core/health/daemon_health.h"

namespace tidemark {

class HealthState {
 public:
  // A loop silent for longer than this is stuck: five missed beats of one
  // second, so a busy turn (a reload reading many files) is not taken for one.
  static constexpr std::chrono::seconds kMaxSilence{5};

  explicit HealthState(std::chrono::steady_clock::duration max_silence = kMaxSilence) : max_silence_(max_silence) {
    beat();
  }

  // The loop turned (LoopHeartbeat, every second).
  void beat();
  void config_loaded(const std::string& state_connection);
  void stopping();
  // The state monitor reached the state database, or did not and why.
  void state_checked(bool up, const std::string& error);

  HealthVerdict liveness(std::chrono::steady_clock::time_point now) const;
  HealthVerdict readiness() const;

 private:
  const std::chrono::steady_clock::duration max_silence_;
  std::atomic<std::chrono::steady_clock::rep> last_beat_{0};  // steady_clock ticks
  mutable std::mutex mutex_;
  ReadinessFacts facts_;  // guarded by mutex_
};

}  // namespace tidemark
