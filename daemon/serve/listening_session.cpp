#include "daemon/serve/listening_session.h"

#include "daemon/pg/data/pipeline_connections.h"

namespace tidemark {

void ListeningSession::set_config(std::shared_ptr<const Config> config) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    config_ = std::move(config);
  }
  if (!thread_.joinable() && !stopping_) thread_ = std::thread([this] { loop(); });
}

void ListeningSession::stop() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
}

std::shared_ptr<const Config> ListeningSession::config() {
  const std::lock_guard<std::mutex> lock(mutex_);
  return config_;
}

void ListeningSession::loop() {
  bool failing = false;
  while (!stopping_) {
    const std::shared_ptr<const Config> listening = config();
    try {
      const auto session = connect_to(*listening, listening->daemon.state);
      session->exec("LISTEN " + channel_);
      client_.opened(*session, failing);
      failing = false;
      // A notification lost while the session is opened again only delays
      // what the client does until it reads anyway.
      while (!stopping_ && config() == listening) {
        const std::vector<std::string> payloads = session->wait_for_notifications(timing_.slice);
        if (stopping_) break;  // nothing more is told once a stop was asked
        client_.heard(*session, payloads);
      }
    } catch (const std::exception& e) {
      client_.failed(e, !failing);
      failing = true;
      for (auto waited = std::chrono::milliseconds(0); waited < timing_.retry_after && !stopping_;
           waited += timing_.slice) {
        std::this_thread::sleep_for(timing_.slice);
      }
    }
  }
}

}  // namespace tidemark
