// What guards the HTTP endpoint, built from the web configuration
// (metrics.web_config): an OpenSSL server context when it serves TLS, and
// the basic auth users when it asks for a password. Built by serve at
// start and at each reload (validate builds one to check the files), then
// shared read-only with the endpoint's connections; immutable once built.
#pragma once

#include <boost/asio/ssl/context.hpp>

#include <memory>

#include "core/config/config_model.h"
#include "core/result.h"
#include "daemon/serve/basic_auth.h"

namespace tidemark {

struct EndpointSecurity {
  std::shared_ptr<boost::asio::ssl::context> tls;  // nullptr: plain HTTP
  std::shared_ptr<BasicAuth> auth;                 // nullptr: no password asked

  // "https, basic auth", "http" and the like, for the log and validate.
  std::string describe() const;
};

// Loads the certificate, key and client CA that metrics.web names (nothing
// to load without one). A file that cannot be loaded, or a key that does
// not match its certificate, is a permanent error whose message names the
// web configuration file, line, column and key, and what to do.
Result<EndpointSecurity> make_endpoint_security(const MetricsConfig& metrics);

}  // namespace tidemark
