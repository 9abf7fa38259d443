// Tells systemd (Type=notify) what the daemon is doing: READY=1,
// RELOADING=1, STOPPING=1, STATUS=..., and WATCHDOG=1 from the event loop
// so a stuck loop gets the service restarted. Without NOTIFY_SOCKET every
// call is a no-op. Loop thread only.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <string>

namespace tidemark {

class SystemdNotifier {
 public:
  explicit SystemdNotifier(boost::asio::io_context& loop) : watchdog_(loop) {}

  void ready(const std::string& status);
  void reloading();
  void stopping();
  // Starts the WATCHDOG=1 timer when systemd asked for one (WatchdogSec).
  void start_watchdog();
  void stop_watchdog() { watchdog_.cancel(); }

 private:
  void pet();

  boost::asio::steady_timer watchdog_;
  std::chrono::microseconds interval_{0};
};

}  // namespace tidemark
