// The two questions a container platform asks the daemon, as decisions on
// facts the daemon gathers: is the event loop alive (GET /healthz), is it
// ready for work (GET /readyz). Pure: the HTTP endpoint asks, any thread.
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace tidemark {

// An answer and, when it is no, one line saying why.
struct HealthVerdict {
  bool ok = false;
  std::string reason;  // empty when ok
};

// The loop refreshes a beat every second; it is alive while its last beat
// is no older than `max_silence`. A beat from the future (a clock read on
// another thread a moment later) counts as fresh.
HealthVerdict judge_liveness(std::chrono::steady_clock::duration since_last_beat,
                             std::chrono::steady_clock::duration max_silence);

// What readiness is decided on.
struct ReadinessFacts {
  bool config_loaded = false;
  bool stopping = false;
  std::string state_connection;     // the state database's connection name
  std::optional<bool> state_up;     // the state monitor's last check; nothing before its first
  std::string state_error;          // that check's error, when it failed
};

// Ready when the configuration is loaded, the daemon is not stopping, and
// the state monitor's last check reached the state database.
HealthVerdict judge_readiness(const ReadinessFacts& facts);

}  // namespace tidemark
