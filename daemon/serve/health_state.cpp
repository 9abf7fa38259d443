#include "daemon/serve/health_state.h"

namespace tidemark {

void HealthState::beat() { last_beat_.store(std::chrono::steady_clock::now().time_since_epoch().count()); }

void HealthState::config_loaded(const std::string& state_connection) {
  const std::lock_guard<std::mutex> lock(mutex_);
  facts_.config_loaded = true;
  facts_.state_connection = state_connection;
}

void HealthState::stopping() {
  const std::lock_guard<std::mutex> lock(mutex_);
  facts_.stopping = true;
}

void HealthState::state_checked(bool up, const std::string& error) {
  const std::lock_guard<std::mutex> lock(mutex_);
  facts_.state_up = up;
  facts_.state_error = up ? std::string() : error;
}

HealthVerdict HealthState::liveness(std::chrono::steady_clock::time_point now) const {
  const std::chrono::steady_clock::time_point last{std::chrono::steady_clock::duration(last_beat_.load())};
  return judge_liveness(now - last, max_silence_);
}

HealthVerdict HealthState::readiness() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return judge_readiness(facts_);
}

}  // namespace tidemark
