// Table-driven tests of the web configuration file (metrics.web_config,
// exporter-toolkit's format): what is accepted, and every broken file named
// with its line, column and key path. Positions were counted by hand.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/config/config_parser.h"

namespace tidemark {
namespace {

// A hash of "secret" at cost 10, as htpasswd -nBC 10 writes one.
const std::string kHash = "$2y$10$hLqFl9jSjoAAy95Z/zw8Ye8wkdMBM8c5Bn1ptYqP/AXyV0.oy0S8m";

ParseOutcome<WebConfig> parse(const std::string& yaml) { return parse_web_config({"web.yml", yaml}); }

struct BrokenWebConfig {
  const char* name;
  std::string yaml;
  int line;
  int column;
  const char* key_path;
  const char* message;  // a fragment of the message
};

}  // namespace

TEST_CASE("a web configuration with TLS and users is read as written") {
  const auto parsed = parse("tls_server_config:\n"
                            "  cert_file: tls/server.crt\n"
                            "  key_file: /etc/tidemark/server.key\n"
                            "  client_auth_type: RequireAndVerifyClientCert\n"
                            "  client_ca_file: ca.crt\n"
                            "  min_version: TLS13\n"
                            "basic_auth_users:\n"
                            "  prom: " + kHash + "\n"
                            "  alice@example.org: \"$2b$04$" + kHash.substr(7) + "\"\n");
  REQUIRE(parsed.errors.empty());
  const WebConfig& web = *parsed.value;
  CHECK(web.file == "web.yml");
  REQUIRE(web.tls);
  CHECK(web.tls->cert_file.path == "tls/server.crt");
  CHECK(web.tls->cert_file.location.line == 2);
  CHECK(web.tls->cert_file.location.column == 14);
  CHECK(web.tls->cert_file.key_path == "tls_server_config.cert_file");
  CHECK(web.tls->key_file.path == "/etc/tidemark/server.key");
  CHECK(web.tls->client_auth == ClientAuth::RequireAndVerifyClientCert);
  REQUIRE(web.tls->client_ca_file);
  CHECK(web.tls->client_ca_file->path == "ca.crt");
  CHECK(web.tls->min_version == TlsVersion::Tls13);
  CHECK(web.tls->max_version == TlsVersion::Tls13);
  REQUIRE(web.users.size() == 2);
  CHECK(web.users[0].name == "prom");
  CHECK(web.users[0].bcrypt_hash == kHash);
  CHECK(web.users[1].name == "alice@example.org");
}

TEST_CASE("defaults: no client certificate, TLS 1.2 to 1.3; users alone mean plain HTTP with a password") {
  auto parsed = parse("tls_server_config: { cert_file: c.pem, key_file: k.pem }\n");
  REQUIRE(parsed.errors.empty());
  CHECK(parsed.value->tls->client_auth == ClientAuth::NoClientCert);
  CHECK_FALSE(parsed.value->tls->client_ca_file);
  CHECK(parsed.value->tls->min_version == TlsVersion::Tls12);
  CHECK(parsed.value->tls->max_version == TlsVersion::Tls13);
  CHECK(parsed.value->users.empty());

  parsed = parse("basic_auth_users: { prom: \"" + kHash + "\" }\n");
  REQUIRE(parsed.errors.empty());
  CHECK_FALSE(parsed.value->tls);
  CHECK(parsed.value->users.size() == 1);
}

TEST_CASE("every broken web configuration is reported with its line, column and key path") {
  const std::string tls = "tls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n";
  const std::vector<BrokenWebConfig> cases = {
      {"unknown top-level key", "tls_server_config: { cert_file: c, key_file: k }\nbasic_auth: {}\n", 2, 1,
       "basic_auth", "unknown key \"basic_auth\"; expected one of: tls_server_config, basic_auth_users"},
      {"unknown TLS key", tls + "  ca_file: ca.pem\n", 4, 3, "tls_server_config.ca_file", "unknown key \"ca_file\""},
      {"exporter-toolkit key tidemark does not implement", tls + "  cipher_suites: [TLS_AES_128_GCM_SHA256]\n", 4, 18,
       "tls_server_config.cipher_suites", "not supported by tidemark: OpenSSL's default suites are used"},
      {"inline certificate", "tls_server_config:\n  cert: \"-----BEGIN\"\n  cert_file: c.pem\n  key_file: k.pem\n", 2, 9,
       "tls_server_config.cert", "not supported by tidemark: give the file with cert_file"},
      {"rate_limit", "basic_auth_users: { prom: \"" + kHash + "\" }\nrate_limit: { burst: 2 }\n", 2, 13,
       "rate_limit", "not supported by tidemark"},
      {"no key file", "tls_server_config:\n  cert_file: c.pem\n", 2, 3, "tls_server_config",
       "missing required key \"key_file\""},
      {"neither TLS nor users", "{}\n", 1, 1, "", "neither tls_server_config nor basic_auth_users"},
      {"not a map", "- a\n", 1, 1, "", "expected a map of keys, got a list"},
      {"a password in clear", "basic_auth_users:\n  prom: hunter2\n", 2, 9, "basic_auth_users.prom",
       "the password hash of \"prom\" is not a bcrypt hash"},
      {"an MD5 crypt hash", "basic_auth_users:\n  prom: $1$abc$def\n", 2, 9, "basic_auth_users.prom",
       "is not a bcrypt hash"},
      {"a cut-off hash", "basic_auth_users:\n  prom: " + kHash.substr(0, 40) + "\n", 2, 9, "basic_auth_users.prom",
       "is not a whole bcrypt hash"},
      {"a cost out of range", "basic_auth_users:\n  prom: $2y$03$" + kHash.substr(7) + "\n", 2, 9,
       "basic_auth_users.prom", "has a bcrypt cost of 3; it must be 04 to 31"},
      {"a character bcrypt never writes", "basic_auth_users:\n  prom: $2y$10$" + kHash.substr(7, 52) + "!\n", 2, 9,
       "basic_auth_users.prom", "holds a character bcrypt never writes, at position 60"},
      {"a user name with a colon", "basic_auth_users:\n  \"a:b\": \"" + kHash + "\"\n", 2, 3, "basic_auth_users",
       "user name \"a:b\" cannot be used"},
      {"a hash that is a list", "basic_auth_users:\n  prom: [a]\n", 2, 9, "basic_auth_users.prom",
       "expected a text value, got a list"},
      {"a user twice", "basic_auth_users:\n  prom: \"" + kHash + "\"\n  prom: \"" + kHash + "\"\n", 3, 3,
       "basic_auth_users.prom", "duplicate key \"prom\""},
      {"TLS 1.1", tls + "  min_version: TLS11\n", 4, 16, "tls_server_config.min_version",
       "TLS 1.0 and 1.1 are refused"},
      {"an unknown TLS version", tls + "  max_version: TLS14\n", 4, 16, "tls_server_config.max_version",
       "\"TLS14\" is not one of: TLS12, TLS13"},
      {"max below min", tls + "  min_version: TLS13\n  max_version: TLS12\n", 5, 16, "tls_server_config.max_version",
       "is below min_version"},
      {"a client auth type that checks nothing", tls + "  client_auth_type: RequireAnyClientCert\n", 4, 21,
       "tls_server_config.client_auth_type", "accepts any certificate without checking it"},
      {"verify without a CA", tls + "  client_auth_type: RequireAndVerifyClientCert\n", 4, 21,
       "tls_server_config.client_auth_type", "needs client_ca_file"},
      {"a CA without verify", tls + "  client_ca_file: ca.pem\n", 4, 19, "tls_server_config.client_ca_file",
       "used only with client_auth_type RequireAndVerifyClientCert"},
      {"an empty path", "tls_server_config:\n  cert_file: \"\"\n  key_file: k.pem\n", 2, 14,
       "tls_server_config.cert_file", "expected a non-empty value"},
      {"YAML syntax", "tls_server_config: [\n", 2, 1, "", "YAML syntax error"},
  };
  for (const BrokenWebConfig& c : cases) {
    const std::string name = c.name;
    CAPTURE(name);
    const auto parsed = parse(c.yaml);
    CHECK_FALSE(parsed.value);
    std::string all;
    for (const ConfigError& e : parsed.errors) all += e.to_string() + "\n";
    CAPTURE(all);
    REQUIRE(parsed.errors.size() == 1);
    const ConfigError& e = parsed.errors.front();
    CHECK(e.file == "web.yml");
    CHECK(e.line == c.line);
    CHECK(e.column == c.column);
    CHECK(e.key_path == c.key_path);
    CHECK(e.message.find(c.message) != std::string::npos);
  }
}

TEST_CASE("a password written in clear, or a long user name, is never repeated whole in a message") {
  const std::string long_name(300, 'u');
  const auto parsed = parse("basic_auth_users:\n  " + long_name + ": \"" + kHash +
                            "\"\n  prom: correct-horse-battery-staple\n");
  REQUIRE(parsed.errors.size() == 2);
  for (const ConfigError& e : parsed.errors) {
    CAPTURE(e.to_string());
    CHECK(e.to_string().find("battery") == std::string::npos);
    CHECK(e.to_string().size() < 400);
  }
}

}  // namespace tidemark
