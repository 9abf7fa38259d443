// A one-request HTTP client for `tidemark healthcheck`: GET a path of the
// daemon's own endpoint (metrics.listen) and report the status and body.
// It speaks TLS when the web configuration serves it, without checking the
// certificate (it asks its own machine's port, for liveness, not secrets),
// and sends basic auth credentials when given. Any thread; each call runs
// its own short Asio loop.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "core/config/config_model.h"
#include "daemon/serve/basic_auth.h"

namespace tidemark {

struct ProbeAnswer {
  bool answered = false;  // false: no HTTP answer; `body` then says why
  unsigned status = 0;
  std::string body;
};

// GETs `path` from the endpoint at `metrics`; a wildcard host (0.0.0.0,
// ::) is asked on the matching loopback address. Gives up after `timeout`.
ProbeAnswer probe_endpoint(const MetricsConfig& metrics, const std::string& path, std::chrono::seconds timeout,
                           const std::optional<BasicCredentials>& credentials = std::nullopt);

}  // namespace tidemark
