// An Alarm over one Asio system_timer on the event loop: wake_at() sets its
// deadline, and the handler calls `on_wake` on the loop thread. Owned by the
// Scheduler; every method must be called on the loop thread.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/system_timer.hpp>

#include <cstdint>
#include <functional>

#include "core/schedule/scheduler_ports.h"

namespace tidemark {

class LoopAlarm final : public Alarm {
 public:
  // `on_wake` runs on the loop each time a deadline passes; it must not
  // outlive what it calls.
  LoopAlarm(boost::asio::io_context& loop, std::function<void()> on_wake);

  void wake_at(Instant at) override;
  void wake_after(std::chrono::steady_clock::duration delay) override;
  void cancel() override;

 private:
  boost::asio::system_timer timer_;
  boost::asio::steady_timer steady_timer_;  // for wake_after: immune to wall-clock steps
  std::function<void()> on_wake_;
  std::uint64_t generation_ = 0;  // of the latest wake_at(); older handlers are stale
};

}  // namespace tidemark
