#include "daemon/serve/http_endpoint.h"

#include <boost/asio/ip/address.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <prometheus/text_serializer.h>

#include <netdb.h>
#include <pthread.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <type_traits>

namespace tidemark {

namespace http = boost::beast::http;
using boost::asio::ip::tcp;

namespace {

// A client gets this long to send its request and read the answer; a slow
// or silent one is dropped rather than holding a connection open.
constexpr std::chrono::seconds kRequestTimeout{10};

// Resolves metrics.host, so that a name that does not resolve is said in
// words. Throws std::runtime_error saying what to do.
tcp::endpoint metrics_endpoint(const MetricsConfig& metrics) {
  const std::string port = std::to_string(metrics.port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(metrics.host.c_str(), port.c_str(), &hints, &found); rc != 0 || !found) {
    throw std::runtime_error("host \"" + metrics.host + "\" does not resolve (" + ::gai_strerror(rc) +
                             "): set metrics.listen to an address of this machine, such as 127.0.0.1:" + port);
  }
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> addresses(found, &::freeaddrinfo);
  tcp::endpoint endpoint;
  std::memcpy(endpoint.data(), found->ai_addr, found->ai_addrlen);
  endpoint.resize(found->ai_addrlen);
  return endpoint;
}

std::string bind_failure(const tcp::endpoint& endpoint, const boost::system::error_code& ec) {
  const std::string host = endpoint.address().to_string();
  const std::string port = std::to_string(endpoint.port());
  if (ec == boost::asio::error::address_in_use) {
    return "port " + port + " on " + host +
           " is already in use (another tidemark, or another program): stop it or choose another port in "
           "metrics.listen";
  }
  if (ec.value() == EADDRNOTAVAIL) {
    return host + " is not an address of this machine: choose one it has, 127.0.0.1 or 0.0.0.0";
  }
  if (ec == boost::asio::error::access_denied) {
    return "port " + port + " needs privileges tidemark does not have: choose a port above 1023";
  }
  return "cannot bind " + host + ":" + port + ": " + ec.message();
}

using PlainStream = boost::beast::tcp_stream;
using TlsStream = boost::beast::ssl_stream<boost::beast::tcp_stream>;

// One connection, plain or TLS: shakes hands (TLS), then reads requests and
// writes answers until the client closes, asks to, or times out; every
// request is checked against the basic auth users first. Lives as long as
// its pending operation.
template <class Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  template <class... StreamArgs>
  Session(std::shared_ptr<const EndpointSecurity> security, HttpEndpoint& endpoint, StreamArgs&&... stream_args)
      : security_(std::move(security)), stream_(std::forward<StreamArgs>(stream_args)...), endpoint_(endpoint) {}

  void start() {
    if constexpr (std::is_same_v<Stream, TlsStream>) {
      boost::beast::get_lowest_layer(stream_).expires_after(kRequestTimeout);
      stream_.async_handshake(boost::asio::ssl::stream_base::server,
                              [self = this->shared_from_this()](const boost::system::error_code& ec) {
                                if (ec) return self->drop();  // plain HTTP, a scanner, a refused certificate
                                self->read();
                              });
    } else {
      read();
    }
  }

 private:
  void read() {
    request_ = {};
    boost::beast::get_lowest_layer(stream_).expires_after(kRequestTimeout);
    http::async_read(stream_, buffer_, request_,
                     [self = this->shared_from_this()](const boost::system::error_code& ec, std::size_t) {
                       if (ec) return self->close();
                       self->respond();
                     });
  }

  bool authorized() const {
    if (!security_->auth) return true;
    const auto header = request_[http::field::authorization];
    return security_->auth->allows(std::string_view(header.data(), header.size()));
  }

  void respond() {
    response_ = {};
    response_.version(request_.version());
    response_.keep_alive(request_.keep_alive());
    response_.set(http::field::server, "tidemark");
    if (!authorized()) {
      response_.result(http::status::unauthorized);
      response_.set(http::field::www_authenticate, "Basic realm=\"tidemark\"");
      response_.set(http::field::content_type, "text/plain; charset=utf-8");
      response_.body() = "unauthorized: give a user of basic_auth_users and its password\n";
    } else if (request_.method() != http::verb::get && request_.method() != http::verb::head) {
      response_.result(http::status::method_not_allowed);
      response_.set(http::field::allow, "GET, HEAD");
      response_.set(http::field::content_type, "text/plain; charset=utf-8");
      response_.body() = "only GET and HEAD\n";
    } else {
      HttpAnswer answer = endpoint_.answer(std::string(request_.target()));
      response_.result(answer.status);
      response_.set(http::field::content_type, answer.content_type);
      response_.body() = std::move(answer.body);
    }
    response_.prepare_payload();
    if (request_.method() == http::verb::head) response_.body().clear();  // Content-Length stays the GET's
    boost::beast::get_lowest_layer(stream_).expires_after(kRequestTimeout);
    http::async_write(stream_, response_,
                      [self = this->shared_from_this()](const boost::system::error_code& ec, std::size_t) {
                        if (ec || !self->response_.keep_alive()) return self->close();
                        self->read();
                      });
  }

  void close() {
    if constexpr (std::is_same_v<Stream, TlsStream>) {
      // TLS says goodbye (close_notify) within the same deadline.
      boost::beast::get_lowest_layer(stream_).expires_after(kRequestTimeout);
      stream_.async_shutdown([self = this->shared_from_this()](const boost::system::error_code&) { self->drop(); });
    } else {
      boost::system::error_code ignored;
      stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
      drop();
    }
  }

  void drop() { boost::beast::get_lowest_layer(stream_).close(); }

  std::shared_ptr<const EndpointSecurity> security_;  // held: the TLS context outlives the stream
  Stream stream_;
  HttpEndpoint& endpoint_;
  boost::beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  http::response<http::string_body> response_;
};

}  // namespace

HttpEndpoint::HttpEndpoint(MetricsRegistry& metrics, HealthState& health)
    : metrics_(metrics),
      health_(health),
      endpoint_registry_(std::make_shared<prometheus::Registry>()),
      bytes_transferred_(prometheus::BuildCounter()
                             .Name("exposer_transferred_bytes_total")
                             .Help("Transferred bytes to metrics services")
                             .Register(*endpoint_registry_)
                             .Add({})),
      scrapes_(prometheus::BuildCounter()
                   .Name("exposer_scrapes_total")
                   .Help("Number of times metrics were scraped")
                   .Register(*endpoint_registry_)
                   .Add({})),
      latencies_(prometheus::BuildSummary()
                     .Name("exposer_request_latencies")
                     .Help("Latencies of serving scrape requests, in microseconds")
                     .Register(*endpoint_registry_)
                     .Add({}, prometheus::Summary::Quantiles{{0.5, 0.05}, {0.9, 0.01}, {0.99, 0.001}})),
      acceptor_(io_),
      retry_(io_),
      security_(std::make_shared<const EndpointSecurity>()) {}

HttpEndpoint::~HttpEndpoint() { stop(); }

void HttpEndpoint::listen(const MetricsConfig& metrics, EndpointSecurity security) {
  secure(std::move(security));
  try {
    const tcp::endpoint endpoint = metrics_endpoint(metrics);
    boost::system::error_code ec;
    acceptor_.open(endpoint.protocol(), ec);
    if (ec) throw std::runtime_error("cannot open a socket: " + ec.message());
    acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
    acceptor_.bind(endpoint, ec);
    if (ec) throw std::runtime_error(bind_failure(endpoint, ec));
    acceptor_.listen(boost::asio::socket_base::max_listen_connections, ec);
    if (ec) throw std::runtime_error(bind_failure(endpoint, ec));
  } catch (const std::exception& e) {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    throw std::runtime_error("cannot serve metrics on " + metrics.listen + ": " + e.what());
  }
  accept();
  thread_ = std::thread([this] {
    // Named, so that its CPU time can be told apart (bench/throughput.sh).
    ::pthread_setname_np(::pthread_self(), "tidemark-http");
    io_.run();
  });
}

void HttpEndpoint::secure(EndpointSecurity security) {
  auto next = std::make_shared<const EndpointSecurity>(std::move(security));
  std::lock_guard<std::mutex> lock(security_mutex_);
  security_ = std::move(next);
}

std::shared_ptr<const EndpointSecurity> HttpEndpoint::security() const {
  std::lock_guard<std::mutex> lock(security_mutex_);
  return security_;
}

std::uint16_t HttpEndpoint::port() const { return acceptor_.local_endpoint().port(); }

void HttpEndpoint::stop() {
  io_.stop();
  if (thread_.joinable()) thread_.join();
  boost::system::error_code ignored;
  acceptor_.close(ignored);  // refused from now on, not left waiting in the backlog
}

void HttpEndpoint::accept() {
  acceptor_.async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
    if (ec == boost::asio::error::operation_aborted) return;
    if (!ec) {
      auto guard = security();
      if (guard->tls) {
        boost::asio::ssl::context& context = *guard->tls;
        std::make_shared<Session<TlsStream>>(std::move(guard), *this, std::move(socket), context)->start();
      } else {
        std::make_shared<Session<PlainStream>>(std::move(guard), *this, std::move(socket))->start();
      }
      return accept();
    }
    // A failed accept (out of file descriptors) must not end the serving,
    // nor spin: the next try waits a moment.
    retry_.expires_after(std::chrono::milliseconds(100));
    retry_.async_wait([this](const boost::system::error_code& wait_ec) {
      if (!wait_ec) accept();
    });
  });
}

HttpAnswer HttpEndpoint::answer(const std::string& target) {
  const std::string path = target.substr(0, target.find('?'));
  const std::string plain = "text/plain; charset=utf-8";
  if (path == "/metrics") {
    const auto started = std::chrono::steady_clock::now();
    // The endpoint's own series first, as civetweb's exposer served them,
    // then ours, written straight into the body.
    std::ostringstream exposer;
    prometheus::TextSerializer().Serialize(exposer, endpoint_registry_->Collect());
    HttpAnswer answer{200, "text/plain; version=0.0.4; charset=utf-8", exposer.str()};
    metrics_.write_text(answer.body);
    bytes_transferred_.Increment(static_cast<double>(answer.body.size()));
    scrapes_.Increment();
    latencies_.Observe(static_cast<double>(
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started).count()));
    return answer;
  }
  if (path == "/healthz" || path == "/readyz") {
    const HealthVerdict verdict =
        path == "/healthz" ? health_.liveness(std::chrono::steady_clock::now()) : health_.readiness();
    if (verdict.ok) return {200, plain, "ok\n"};
    return {503, plain, verdict.reason + "\n"};
  }
  return {404, plain, "not found: tidemark serves /metrics, /healthz and /readyz\n"};
}

}  // namespace tidemark
