#include "daemon/serve/loop_alarm.h"

namespace tidemark {

LoopAlarm::LoopAlarm(boost::asio::io_context& loop, std::function<void()> on_wake)
    : timer_(loop), steady_timer_(loop), on_wake_(std::move(on_wake)) {}

void LoopAlarm::wake_at(Instant at) {
  const std::uint64_t generation = ++generation_;
  timer_.expires_at(std::chrono::system_clock::time_point(at.time_since_epoch()));
  timer_.async_wait([this, generation](const boost::system::error_code& ec) {
    if (ec == boost::asio::error::operation_aborted) return;
    // A handler already queued when the deadline moved: the newer wait rings.
    if (generation != generation_) return;
    on_wake_();
  });
}

void LoopAlarm::wake_after(std::chrono::steady_clock::duration delay) {
  const std::uint64_t generation = ++generation_;
  steady_timer_.expires_after(delay);
  steady_timer_.async_wait([this, generation](const boost::system::error_code& ec) {
    if (ec == boost::asio::error::operation_aborted) return;
    if (generation != generation_) return;  // a later request replaced this one
    on_wake_();
  });
}

void LoopAlarm::cancel() {
  ++generation_;
  timer_.cancel();
  steady_timer_.cancel();
}

}  // namespace tidemark
