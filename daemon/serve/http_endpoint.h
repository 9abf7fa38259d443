// The daemon's one HTTP port (metrics.listen): GET /metrics serves the
// registry in Prometheus' text format, /healthz whether the event loop
// turns, /readyz whether the daemon is ready (HealthState); over TLS and
// behind basic auth when the web configuration says so (EndpointSecurity),
// all three alike. Owner: serve_command. It runs its own Asio loop on a
// thread of its own, so a stuck event loop gets a 503 rather than no
// answer; listen(), secure(), port() and stop() are called from the
// owner's threads.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <prometheus/counter.h>
#include <prometheus/registry.h>
#include <prometheus/summary.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/config/config_model.h"
#include "daemon/serve/endpoint_security.h"
#include "daemon/serve/health_state.h"
#include "daemon/serve/metrics_registry.h"

namespace tidemark {

// What one request gets: a status code, a content type and a body.
struct HttpAnswer {
  unsigned status = 200;
  std::string content_type;
  std::string body;
};

class HttpEndpoint {
 public:
  HttpEndpoint(MetricsRegistry& metrics, HealthState& health);
  ~HttpEndpoint();
  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;

  // Binds host:port and starts answering, guarded by `security`. Throws
  // std::runtime_error ("cannot serve metrics on <listen>: ...") saying
  // what to do when the host does not resolve or the port cannot be bound.
  void listen(const MetricsConfig& metrics, EndpointSecurity security = {});
  // Guards connections accepted from now on with `security` (a reload);
  // those already open keep what they began with.
  void secure(EndpointSecurity security);
  // The port bound (the one asked for, or the kernel's pick for port 0).
  std::uint16_t port() const;
  // Stops answering and joins the thread; idempotent.
  void stop();

  // The answer to GET `target`; any thread (the sessions call it).
  HttpAnswer answer(const std::string& target);

 private:
  void accept();
  std::shared_ptr<const EndpointSecurity> security() const;

  MetricsRegistry& metrics_;
  HealthState& health_;
  // The exposer_* series prometheus-cpp's civetweb exposer served beside
  // ours: kept, so that /metrics is what it was.
  std::shared_ptr<prometheus::Registry> endpoint_registry_;
  prometheus::Counter& bytes_transferred_;
  prometheus::Counter& scrapes_;
  prometheus::Summary& latencies_;
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer retry_;  // after a failed accept
  mutable std::mutex security_mutex_;
  std::shared_ptr<const EndpointSecurity> security_;
  std::thread thread_;
};

}  // namespace tidemark
