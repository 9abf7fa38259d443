#include "core/health/daemon_health.h"

#include <algorithm>
#include <cstdio>

namespace tidemark {

namespace {

// A reason is one line of a response body: an error text from libpq spans
// several, and a body a load balancer logs should not.
std::string one_line(std::string text) {
  std::replace_if(text.begin(), text.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

}  // namespace

HealthVerdict judge_liveness(std::chrono::steady_clock::duration since_last_beat,
                             std::chrono::steady_clock::duration max_silence) {
  if (since_last_beat <= max_silence) return {true, {}};
  const auto seconds = std::chrono::duration_cast<std::chrono::milliseconds>(since_last_beat).count() / 1000.0;
  char text[64];
  std::snprintf(text, sizeof text, "%.1f", seconds);
  return {false, std::string("the event loop has not turned for ") + text + " s"};
}

HealthVerdict judge_readiness(const ReadinessFacts& facts) {
  if (!facts.config_loaded) return {false, "the configuration is not loaded yet"};
  if (facts.stopping) return {false, "stopping"};
  if (!facts.state_up) return {false, "the state database " + facts.state_connection + " has not been checked yet"};
  if (!*facts.state_up) {
    std::string reason = "the state database " + facts.state_connection + " is unreachable";
    if (!facts.state_error.empty()) reason += ": " + one_line(facts.state_error);
    return {false, reason};
  }
  return {true, {}};
}

}  // namespace tidemark
