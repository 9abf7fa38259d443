// The daemon's HTTP endpoint on a real socket: /metrics serves the
// registry's text (and the exposer_* series it always had), /healthz and
// /readyz answer 200 or 503 with the reason, anything else 404; a port in
// use or a host that does not resolve is said in words. The requests go
// through `tidemark healthcheck`'s client.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "core/config/config_parser.h"
#include "daemon/serve/http_endpoint.h"
#include "daemon/serve/http_probe.h"

namespace tidemark {
namespace {

Config one_table() {
  const auto daemon = parse_daemon_config({"t.yaml", "state: w\nconnections: { w: { dsn: x }, s: { dsn: y } }\n"});
  REQUIRE(daemon.value);
  const auto config = parse_config(*daemon.value, {{"p.yaml", "pipeline: p\nsource: s\ntarget: w\nschedule: '@hourly'\n"
                                                               "tables:\n  - { name: orders, source_table: s.o, "
                                                               "target_table: r.o, key: [id], cursor: c }\n"}});
  REQUIRE(config.value);
  return *config.value;
}

MetricsConfig loopback(std::uint16_t port) {
  MetricsConfig config;
  config.host = "127.0.0.1";
  config.port = port;
  config.listen = "127.0.0.1:" + std::to_string(port);
  return config;
}

ProbeAnswer get(std::uint16_t port, const std::string& path) {
  return probe_endpoint(loopback(port), path, std::chrono::seconds(5));
}

}  // namespace

TEST_CASE("/metrics, /healthz and /readyz answer with real status codes") {
  MetricsRegistry metrics;
  metrics.set_config(one_table());
  HealthState health(std::chrono::milliseconds(300));
  HttpEndpoint endpoint(metrics, health);
  endpoint.listen(loopback(0));
  const std::uint16_t port = endpoint.port();
  REQUIRE(port != 0);

  const ProbeAnswer scrape = get(port, "/metrics");
  REQUIRE(scrape.answered);
  CHECK(scrape.status == 200);
  CHECK(scrape.body.find(R"(tidemark_runs_total{pipeline="p",status="success",table="orders"} 0)") !=
        std::string::npos);
  CHECK(scrape.body.find(metrics.scrape_text()) != std::string::npos);
  // What prometheus-cpp's exposer added to every scrape is still there.
  CHECK(scrape.body.find("# TYPE exposer_scrapes_total counter") != std::string::npos);
  CHECK(scrape.body.find("exposer_transferred_bytes_total") != std::string::npos);
  CHECK(scrape.body.find("exposer_request_latencies_count") != std::string::npos);
  CHECK(get(port, "/metrics").body.find("exposer_scrapes_total 1") != std::string::npos);

  CHECK(get(port, "/healthz").status == 200);
  CHECK(get(port, "/healthz").body == "ok\n");

  // Nothing loaded, nothing checked: not ready, and it says why.
  ProbeAnswer ready = get(port, "/readyz");
  CHECK(ready.status == 503);
  CHECK(ready.body == "the configuration is not loaded yet\n");
  health.config_loaded("w");
  CHECK(get(port, "/readyz").body == "the state database w has not been checked yet\n");
  health.state_checked(false, "cannot connect to w: connection refused");
  ready = get(port, "/readyz");
  CHECK(ready.status == 503);
  CHECK(ready.body == "the state database w is unreachable: cannot connect to w: connection refused\n");
  health.state_checked(true, {});
  ready = get(port, "/readyz");
  CHECK(ready.status == 200);
  CHECK(ready.body == "ok\n");
  health.stopping();
  CHECK(get(port, "/readyz").status == 503);

  // No beat for longer than the allowed silence: the loop is stuck, and
  // the endpoint, on its own thread, still answers.
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  const ProbeAnswer stuck = get(port, "/healthz");
  CHECK(stuck.status == 503);
  CHECK(stuck.body.find("the event loop has not turned for 0.") == 0);
  health.beat();
  CHECK(get(port, "/healthz").status == 200);

  CHECK(get(port, "/metrics?format=text").status == 200);
  CHECK(get(port, "/").status == 404);
  CHECK(get(port, "/health").status == 404);

  endpoint.stop();
  const ProbeAnswer gone = get(port, "/healthz");
  CHECK_FALSE(gone.answered);
  CHECK(gone.body.find("cannot connect to http://127.0.0.1:" + std::to_string(port) + "/healthz") == 0);
}

// Issue 10, item 3: a port in use or a host that does not resolve said
// "null context when constructing CivetServer".
TEST_CASE("regression: a metrics port in use or a host that does not resolve is said in words") {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  REQUIRE(::listen(fd, 1) == 0);
  socklen_t length = sizeof address;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0);
  const auto port = ntohs(address.sin_port);

  const auto error_of = [](const std::string& host, std::uint16_t p) {
    MetricsConfig config;
    config.host = host;
    config.port = p;
    config.listen = host + ":" + std::to_string(p);
    try {
      MetricsRegistry metrics;
      HealthState health;
      HttpEndpoint endpoint(metrics, health);
      endpoint.listen(config);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string in_use = "127.0.0.1:" + std::to_string(port);
  CHECK(error_of("127.0.0.1", port) == "cannot serve metrics on " + in_use + ": port " + std::to_string(port) +
                                           " on 127.0.0.1 is already in use (another tidemark, or another "
                                           "program): stop it or choose another port in metrics.listen");
  ::close(fd);
  CHECK(error_of("127.0.0.1", port) == "no error");
  CHECK(error_of("localhost", port) == "no error");
  const std::string unresolved = error_of("no-such-host.invalid", 9464);
  CHECK(unresolved.find("cannot serve metrics on no-such-host.invalid:9464: host \"no-such-host.invalid\" does not "
                        "resolve") == 0);
  CHECK(unresolved.find("null context") == std::string::npos);
  CHECK(error_of("192.0.2.1", 9464) == "cannot serve metrics on 192.0.2.1:9464: 192.0.2.1 is not an address of "
                                       "this machine: choose one it has, 127.0.0.1 or 0.0.0.0");
}

}  // namespace tidemark
