#include "daemon/serve/loop_heartbeat.h"

namespace tidemark {

void LoopHeartbeat::start() {
  stopped_ = false;
  beat();
}

void LoopHeartbeat::stop() {
  stopped_ = true;
  timer_.cancel();
}

void LoopHeartbeat::beat() {
  health_.beat();
  timer_.expires_after(std::chrono::seconds(1));
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec && !stopped_) beat();
  });
}

}  // namespace tidemark
