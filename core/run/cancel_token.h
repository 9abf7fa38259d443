// A flag a run checks between steps: set by whoever wants it to stop
// (shutdown after the grace period, a signal to a foreground command),
// with what stopped it for the run's error. Shared by pointer;
// thread-safe, and cancel() is async-signal-safe (two lock-free atomic
// stores), so a signal handler may call it.
#pragma once

#include <atomic>
#include <string>

namespace tidemark {

class CancelToken {
 public:
  // `cause` names what stopped the run ("SIGTERM"); it must be a string
  // with static storage duration, such as a literal: a signal handler
  // cannot allocate a copy.
  void cancel(const char* cause = nullptr) {
    if (cause != nullptr) cause_.store(cause);
    cancelled_.store(true);
  }
  bool cancelled() const { return cancelled_.load(); }

  // What a run stopped by this token records as its error.
  std::string reason() const {
    const char* cause = cause_.load();
    return cause ? std::string("cancelled by ") + cause + ": the run was stopped before it finished"
                 : std::string("cancelled: the run was stopped before it finished");
  }

 private:
  static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<const char*>::is_always_lock_free,
                "cancel() must be async-signal-safe");
  std::atomic<bool> cancelled_{false};
  std::atomic<const char*> cause_{nullptr};
};

}  // namespace tidemark
