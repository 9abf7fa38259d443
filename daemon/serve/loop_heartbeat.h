// Refreshes HealthState's beat from the event loop once a second, so
// /healthz (answered on the HTTP endpoint's own thread) can tell a loop
// that turns from one that is stuck. Loop thread only.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "daemon/serve/health_state.h"

namespace tidemark {

class LoopHeartbeat {
 public:
  LoopHeartbeat(boost::asio::io_context& loop, HealthState& health) : timer_(loop), health_(health) {}

  void start();
  // Cancels the timer, so that the loop can run out at shutdown.
  void stop();

 private:
  void beat();

  boost::asio::steady_timer timer_;
  HealthState& health_;
  bool stopped_ = false;
};

}  // namespace tidemark
