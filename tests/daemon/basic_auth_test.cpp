// Basic auth on the HTTP endpoint: the Authorization header parsed as
// RFC 7617 writes it, bcrypt hashes checked through libxcrypt, a verified
// password remembered so that scrapes do not pay bcrypt again, and every
// path behind it with a 401 that asks for it; `tidemark healthcheck`'s
// client sends the credentials it is given.
#include <doctest/doctest.h>

#include <crypt.h>

#include <memory>
#include <string>
#include <vector>

#include "daemon/serve/basic_auth.h"
#include "daemon/serve/endpoint_security.h"
#include "daemon/serve/http_endpoint.h"
#include "daemon/serve/http_probe.h"

namespace tidemark {
namespace {

// A fresh bcrypt hash at cost 4 (the least: quick tests), as a user makes one.
std::string bcrypt_hash(const std::string& password) {
  char setting[CRYPT_GENSALT_OUTPUT_SIZE];
  REQUIRE(::crypt_gensalt_rn("$2b$", 4, nullptr, 0, setting, sizeof setting) != nullptr);
  auto data = std::make_unique<crypt_data>();
  const char* hashed = ::crypt_rn(password.c_str(), setting, data.get(), sizeof(crypt_data));
  REQUIRE(hashed != nullptr);
  return hashed;
}

std::string header(const std::string& user, const std::string& password) {
  return basic_authorization({user, password});
}

}  // namespace

TEST_CASE("the Basic Authorization header: parsed as written, refused when it is anything else") {
  CHECK(basic_authorization({"Aladdin", "open sesame"}) == "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==");
  struct Row {
    const char* header;
    bool parsed;
    const char* user;
    const char* password;
  };
  const std::vector<Row> rows = {
      {"Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==", true, "Aladdin", "open sesame"},  // RFC 7617's example
      {"basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==", true, "Aladdin", "open sesame"},  // the scheme's case is free
      {"Basic   QWxhZGRpbjpvcGVuIHNlc2FtZQ==  ", true, "Aladdin", "open sesame"},
      {"Basic dTpwOmM=", true, "u", "p:c"},     // the first colon splits; the password may hold more
      {"Basic OnA=", true, "", "p"},            // an empty user parses (and matches no one)
      {"Basic dTo=", true, "u", ""},            // an empty password
      {"", false, "", ""},
      {"Basic", false, "", ""},
      {"Basic ", false, "", ""},
      {"Bearer QWxhZGRpbjpvcGVuIHNlc2FtZQ==", false, "", ""},
      {"Basic QWxhZGRpbg==", false, "", ""},    // "Aladdin": no colon
      {"Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ", false, "", ""},  // not a multiple of four
      {"Basic QWxh!GRpbjpvcGVuIHNlc2FtZQ==", false, "", ""},  // not base64
      {"Basic dQA6cA==", false, "", ""},        // "u\0:p": a NUL would cut the password short for crypt
  };
  for (const Row& row : rows) {
    const std::string text = row.header;
    CAPTURE(text);
    const auto parsed = parse_basic_authorization(text);
    REQUIRE(parsed.has_value() == row.parsed);
    if (!parsed) continue;
    CHECK(parsed->user == row.user);
    CHECK(parsed->password == row.password);
  }
}

TEST_CASE("a user's password is checked with bcrypt once, then remembered; others are refused") {
  BasicAuth auth({{"prom", bcrypt_hash("s3cret")}, {"alice", bcrypt_hash("other")}});
  CHECK_FALSE(auth.allows(""));
  CHECK_FALSE(auth.allows("Bearer x"));
  CHECK(auth.bcrypt_runs() == 0);  // nothing to check without credentials

  CHECK(auth.allows(header("prom", "s3cret")));
  CHECK(auth.bcrypt_runs() == 1);
  for (int i = 0; i < 5; ++i) CHECK(auth.allows(header("prom", "s3cret")));
  CHECK(auth.bcrypt_runs() == 1);  // every later scrape answered from memory

  CHECK_FALSE(auth.allows(header("prom", "s3cret ")));
  CHECK_FALSE(auth.allows(header("prom", "other")));    // alice's password is not prom's
  CHECK_FALSE(auth.allows(header("Prom", "s3cret")));   // user names are exact
  CHECK_FALSE(auth.allows(header("nobody", "s3cret")));
  CHECK(auth.bcrypt_runs() == 5);  // a refusal is never remembered, an unknown user costs a bcrypt too
  CHECK(auth.allows(header("alice", "other")));
  CHECK(auth.allows(header("prom", "s3cret")));  // one user's success does not forget another's
  CHECK(auth.bcrypt_runs() == 6);
}

TEST_CASE("every path asks for the password with a 401; the client sends it when given") {
  MetricsRegistry metrics;
  HealthState health;
  health.config_loaded("w");
  health.state_checked(true, {});
  MetricsConfig config;
  config.host = "127.0.0.1";
  config.port = 0;
  config.listen = "127.0.0.1:0";
  WebConfig web;
  web.users = {{"prom", bcrypt_hash("s3cret")}};
  config.web = web;
  auto security = make_endpoint_security(config);
  REQUIRE(security.ok());
  CHECK(security->describe() == "http, basic auth");
  HttpEndpoint endpoint(metrics, health);
  endpoint.listen(config, std::move(security).value());
  config.port = endpoint.port();
  const auto timeout = std::chrono::seconds(5);

  for (const std::string path : {"/metrics", "/healthz", "/readyz", "/nothing"}) {
    CAPTURE(path);
    const ProbeAnswer refused = probe_endpoint(config, path, timeout);
    REQUIRE(refused.answered);
    CHECK(refused.status == 401);
    CHECK(refused.body == "unauthorized: give a user of basic_auth_users and its password\n");
    CHECK(probe_endpoint(config, path, timeout, BasicCredentials{"prom", "wrong"}).status == 401);
  }
  const BasicCredentials prom{"prom", "s3cret"};
  CHECK(probe_endpoint(config, "/healthz", timeout, prom).status == 200);
  CHECK(probe_endpoint(config, "/readyz", timeout, prom).status == 200);
  CHECK(probe_endpoint(config, "/metrics", timeout, prom).body.find("exposer_scrapes_total") != std::string::npos);
  CHECK(probe_endpoint(config, "/nothing", timeout, prom).status == 404);

  // A reload without users: no password asked from the next connection on.
  endpoint.secure({});
  CHECK(probe_endpoint(config, "/healthz", timeout).status == 200);
  endpoint.stop();
}

TEST_CASE("a web configuration whose files do not load names the file, line, column and key") {
  MetricsConfig config;
  WebConfig web;
  TlsServerConfig tls;
  tls.cert_file = {"/nonexistent/server.crt", {"web.yml", 2, 14}, "tls_server_config.cert_file"};
  tls.key_file = {"/nonexistent/server.key", {"web.yml", 3, 13}, "tls_server_config.key_file"};
  web.tls = tls;
  config.web = web;
  const auto security = make_endpoint_security(config);
  REQUIRE_FALSE(security.ok());
  CHECK(security.error_kind() == ErrorKind::Permanent);
  CHECK(security.error() ==
        "web.yml:2:14: tls_server_config.cert_file: cannot read /nonexistent/server.crt (No such file or directory): "
        "name a file tidemark's user can read");
  CHECK(make_endpoint_security(MetricsConfig{}).ok());  // no web configuration: plain HTTP, no password
}

}  // namespace tidemark
