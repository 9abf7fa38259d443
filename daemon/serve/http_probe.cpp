#include "daemon/serve/http_probe.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

namespace tidemark {

namespace http = boost::beast::http;
using boost::asio::ip::tcp;

ProbeAnswer probe_endpoint(const MetricsConfig& metrics, const std::string& path, std::chrono::seconds timeout) {
  std::string host = metrics.host;
  if (host == "0.0.0.0" || host.empty()) host = "127.0.0.1";
  if (host == "::") host = "::1";

  boost::asio::io_context io;
  tcp::resolver resolver(io);
  boost::beast::tcp_stream stream(io);
  boost::beast::flat_buffer buffer;
  http::request<http::empty_body> request{http::verb::get, path, 11};
  request.set(http::field::host, host);
  request.set(http::field::user_agent, "tidemark healthcheck");
  request.set(http::field::connection, "close");
  http::response<http::string_body> response;
  ProbeAnswer out;
  const auto failed = [&](const char* what, const boost::system::error_code& ec) {
    out.body = std::string(what) + " http://" + metrics.listen + path + ": " + ec.message();
  };

  // One deadline for the whole exchange: a stuck daemon must not hang a
  // container platform's health check.
  stream.expires_after(timeout);
  resolver.async_resolve(host, std::to_string(metrics.port), [&](const boost::system::error_code& resolve_ec,
                                                                 const tcp::resolver::results_type& found) {
    if (resolve_ec) return failed("cannot resolve", resolve_ec);
    stream.async_connect(found, [&](const boost::system::error_code& connect_ec, const tcp::endpoint&) {
      if (connect_ec) return failed("cannot connect to", connect_ec);
      http::async_write(stream, request, [&](const boost::system::error_code& write_ec, std::size_t) {
        if (write_ec) return failed("cannot send to", write_ec);
        http::async_read(stream, buffer, response, [&](const boost::system::error_code& read_ec, std::size_t) {
          if (read_ec) return failed("no answer from", read_ec);
          out.answered = true;
          out.status = response.result_int();
          out.body = response.body();
        });
      });
    });
  });
  io.run();
  return out;
}

}  // namespace tidemark
