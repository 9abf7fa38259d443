#include "daemon/serve/endpoint_security.h"

#include <boost/asio/ssl/error.hpp>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "core/config/config_error.h"

namespace tidemark {
namespace {

namespace ssl = boost::asio::ssl;

// Why OpenSSL failed, in its words (Asio took the reason off its queue).
std::string openssl_reason(const boost::system::error_code& ec) {
  ::ERR_clear_error();
  return ec.message();
}

Error web_config_error(const WebConfigPath& at, const std::string& what) {
  const ConfigError e{at.location.file, at.location.line, at.location.column, at.key_path, what};
  return permanent_error(e.to_string());
}

// Why `at` cannot be opened for reading, in the system's words; nothing
// when it can (OpenSSL's own reason for a missing file says less).
std::optional<std::string> unreadable(const WebConfigPath& at) {
  const int fd = ::open(at.path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return std::string(std::strerror(errno));
  ::close(fd);
  return std::nullopt;
}

int protocol_version(TlsVersion v) { return v == TlsVersion::Tls13 ? TLS1_3_VERSION : TLS1_2_VERSION; }

Result<std::shared_ptr<ssl::context>> make_tls_context(const TlsServerConfig& tls) {
  auto context = std::make_shared<ssl::context>(ssl::context::tls_server);
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                       ssl::context::single_dh_use);
  SSL_CTX* native = context->native_handle();
  ::SSL_CTX_set_min_proto_version(native, protocol_version(tls.min_version));
  ::SSL_CTX_set_max_proto_version(native, protocol_version(tls.max_version));

  for (const WebConfigPath* file : {&tls.cert_file, &tls.key_file}) {
    if (const auto why = unreadable(*file)) {
      return web_config_error(*file, "cannot read " + file->path + " (" + *why + "): name a file tidemark's user can read");
    }
  }
  if (tls.client_ca_file) {
    if (const auto why = unreadable(*tls.client_ca_file)) {
      return web_config_error(*tls.client_ca_file, "cannot read " + tls.client_ca_file->path + " (" + *why +
                                                 "): name a file tidemark's user can read");
    }
  }
  boost::system::error_code ec;
  context->use_certificate_chain_file(tls.cert_file.path, ec);
  if (ec) {
    return web_config_error(tls.cert_file, "cannot load the certificate " + tls.cert_file.path + " (" + openssl_reason(ec) +
                                         "): name a readable PEM certificate file");
  }
  const auto mismatch = [&] {
    ::ERR_clear_error();
    return web_config_error(tls.key_file, "the key " + tls.key_file.path + " is not the key of the certificate " +
                                        tls.cert_file.path + ": name the pair's key");
  };
  context->use_private_key_file(tls.key_file.path, ssl::context::pem, ec);
  if (ec && ec.category() == boost::asio::error::get_ssl_category() &&
      ERR_GET_REASON(static_cast<unsigned long>(ec.value())) == X509_R_KEY_VALUES_MISMATCH) {
    return mismatch();
  }
  if (ec) {
    return web_config_error(tls.key_file, "cannot load the private key " + tls.key_file.path + " (" + openssl_reason(ec) +
                                        "): name a readable, unencrypted PEM key file");
  }
  if (::SSL_CTX_check_private_key(native) != 1) return mismatch();
  if (tls.client_auth != ClientAuth::NoClientCert && tls.client_ca_file) {
    context->load_verify_file(tls.client_ca_file->path, ec);
    if (ec) {
      return web_config_error(*tls.client_ca_file, "cannot load the client CA " + tls.client_ca_file->path + " (" +
                                                  openssl_reason(ec) + "): name a readable PEM certificate file");
    }
    ssl::verify_mode mode = ssl::verify_peer;
    if (tls.client_auth == ClientAuth::RequireAndVerifyClientCert) mode |= ssl::verify_fail_if_no_peer_cert;
    context->set_verify_mode(mode);
  }
  return context;
}

}  // namespace

std::string EndpointSecurity::describe() const {
  std::string out = tls ? "https" : "http";
  if (auth) out += ", basic auth";
  return out;
}

Result<EndpointSecurity> make_endpoint_security(const MetricsConfig& metrics) {
  EndpointSecurity out;
  if (!metrics.web) return out;
  if (metrics.web->tls) {
    auto context = make_tls_context(*metrics.web->tls);
    if (!context) return context.failure();
    out.tls = std::move(context).value();
  }
  if (!metrics.web->users.empty()) out.auth = std::make_shared<BasicAuth>(metrics.web->users);
  return out;
}

}  // namespace tidemark
