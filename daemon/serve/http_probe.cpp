#include "daemon/serve/http_probe.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <openssl/ssl.h>

#include <functional>
#include <type_traits>

namespace tidemark {

namespace http = boost::beast::http;
namespace ssl = boost::asio::ssl;
using boost::asio::ip::tcp;

namespace {

using Failed = std::function<void(const char*, const boost::system::error_code&)>;

// Sends `request` on a connected `stream` (after the TLS handshake, for a
// TLS stream) and reads the answer into `out`.
template <class Stream>
void exchange(Stream& stream, const std::string& host, http::request<http::empty_body>& request,
              boost::beast::flat_buffer& buffer, http::response<http::string_body>& response, ProbeAnswer& out,
              const Failed& failed) {
  const auto send = [&] {
    http::async_write(stream, request, [&](const boost::system::error_code& write_ec, std::size_t) {
      if (write_ec) return failed("cannot send to", write_ec);
      http::async_read(stream, buffer, response, [&](const boost::system::error_code& read_ec, std::size_t) {
        // A TLS peer that closes without close_notify after a whole answer is no failure.
        if (read_ec && read_ec != ssl::error::stream_truncated) return failed("no answer from", read_ec);
        out.answered = true;
        out.status = response.result_int();
        out.body = response.body();
      });
    });
  };
  if constexpr (std::is_same_v<Stream, boost::beast::ssl_stream<boost::beast::tcp_stream>>) {
    ::SSL_set_tlsext_host_name(stream.native_handle(), host.c_str());
    stream.async_handshake(ssl::stream_base::client, [&, send](const boost::system::error_code& ec) {
      if (ec) return failed("no TLS handshake with", ec);
      send();
    });
  } else {
    send();
  }
}

}  // namespace

ProbeAnswer probe_endpoint(const MetricsConfig& metrics, const std::string& path, std::chrono::seconds timeout,
                           const std::optional<BasicCredentials>& credentials) {
  std::string host = metrics.host;
  if (host == "0.0.0.0" || host.empty()) host = "127.0.0.1";
  if (host == "::") host = "::1";
  const bool tls = metrics.web && metrics.web->tls;

  boost::asio::io_context io;
  tcp::resolver resolver(io);
  ssl::context context(ssl::context::tls_client);
  context.set_verify_mode(ssl::verify_none);  // its own port: liveness, not secrets (docs/operations.md)
  boost::beast::tcp_stream plain(io);
  boost::beast::ssl_stream<boost::beast::tcp_stream> secure(io, context);
  boost::beast::tcp_stream& lowest = tls ? boost::beast::get_lowest_layer(secure) : plain;
  boost::beast::flat_buffer buffer;
  http::request<http::empty_body> request{http::verb::get, path, 11};
  request.set(http::field::host, host);
  request.set(http::field::user_agent, "tidemark healthcheck");
  request.set(http::field::connection, "close");
  if (credentials) request.set(http::field::authorization, basic_authorization(*credentials));
  http::response<http::string_body> response;
  ProbeAnswer out;
  const std::string url = std::string(tls ? "https://" : "http://") + metrics.listen + path;
  const Failed failed = [&](const char* what, const boost::system::error_code& ec) {
    out.body = std::string(what) + " " + url + ": " + ec.message();
  };

  // One deadline for the whole exchange: a stuck daemon must not hang a
  // container platform's health check.
  lowest.expires_after(timeout);
  resolver.async_resolve(host, std::to_string(metrics.port), [&](const boost::system::error_code& resolve_ec,
                                                                 const tcp::resolver::results_type& found) {
    if (resolve_ec) return failed("cannot resolve", resolve_ec);
    lowest.async_connect(found, [&](const boost::system::error_code& connect_ec, const tcp::endpoint&) {
      if (connect_ec) return failed("cannot connect to", connect_ec);
      if (tls) {
        exchange(secure, host, request, buffer, response, out, failed);
      } else {
        exchange(plain, host, request, buffer, response, out, failed);
      }
    });
  });
  io.run();
  return out;
}

}  // namespace tidemark
