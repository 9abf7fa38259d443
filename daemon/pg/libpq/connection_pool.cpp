#include "daemon/pg/libpq/connection_pool.h"

#include <filesystem>
#include <stdexcept>

#include "daemon/pg/libpq/dsn_resolver.h"
#include "daemon/pg/libpq/source_session.h"

namespace tidemark {
namespace {

struct Endpoint {
  std::string dsn;
  KeepaliveTimes keepalives;
  std::string key;  // name, DSN, kind and lease: a reload that changes one gets new sessions
};

Endpoint resolve(const Config& config, const std::string& name, SessionKind kind) {
  const ConnectionConfig* connection = config.daemon.find_connection(name);
  if (connection == nullptr) throw std::runtime_error("no connection named " + name);
  const std::string base_dir = std::filesystem::path(config.daemon.file).parent_path().string();
  Endpoint t;
  t.dsn = resolve_dsn(*connection, base_dir);
  t.keepalives = KeepaliveTimes::for_lease(config.daemon.fleet.lease);
  t.key = name + '\n' + t.dsn + '\n' + (kind == SessionKind::Source ? "source" : "read-write") + '\n' +
          std::to_string(config.daemon.fleet.lease.count());
  return t;
}

std::unique_ptr<PgConnection> open(const Endpoint& endpoint, const std::string& name, SessionKind kind) {
  auto connection = std::make_unique<PgConnection>(endpoint.dsn, name, endpoint.keepalives);
  if (kind == SessionKind::Source) make_read_only_source(*connection);
  return connection;
}

// One round trip that wipes what an earlier run left on the session:
// locks, temp tables, settings.
void reset_session(PgConnection& connection, SessionKind kind) {
  connection.reset(kind == SessionKind::Source ? read_only_source_settings() : std::string());
}

}  // namespace

void PooledConnection::reset() {
  if (!connection_) return;
  if (pool_ != nullptr) {
    pool_->give_back(key_, std::move(connection_));
  } else {
    connection_.reset();
  }
}

ConnectionPool::ConnectionPool(std::size_t max_idle, std::chrono::seconds idle_timeout)
    : max_idle_(max_idle), idle_timeout_(idle_timeout), reaper_([this] { reap_idle(); }) {}

ConnectionPool::~ConnectionPool() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  reaper_.join();
}

PooledConnection ConnectionPool::acquire(const Config& config, const std::string& name, SessionKind kind) {
  const Endpoint target = resolve(config, name, kind);
  for (;;) {
    std::unique_ptr<PgConnection> candidate;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      auto it = idle_.find(target.key);
      if (it == idle_.end() || it->second.empty()) break;
      candidate = std::move(it->second.back().connection);  // the most recently used: the warmest
      it->second.pop_back();
    }
    // Died while idle (a restart, a terminated backend): try the next, then a new one.
    if (candidate->closed_by_server()) continue;
    // A session its last user left as found keeps its prepared statements.
    if (!candidate->needs_reset()) return PooledConnection(this, target.key, std::move(candidate));
    try {
      reset_session(*candidate, kind);
      return PooledConnection(this, target.key, std::move(candidate));
    } catch (const PgError&) {
    }
  }
  auto fresh = open(target, name, kind);
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    ++opened_;
  }
  return PooledConnection(this, target.key, std::move(fresh));
}

void ConnectionPool::give_back(const std::string& key, std::unique_ptr<PgConnection> connection) {
  if (!connection->reusable()) return;  // closes it
  std::unique_ptr<PgConnection> surplus;
  const std::lock_guard<std::mutex> lock(mutex_);
  auto& sessions = idle_[key];
  if (stopping_ || sessions.size() >= max_idle_) {
    surplus = std::move(connection);  // closed after the lock is released
    return;
  }
  sessions.push_back(Idle{std::move(connection), std::chrono::steady_clock::now()});
}

void ConnectionPool::reap_idle() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, std::max(std::chrono::seconds(1), idle_timeout_ / 4), [this] { return stopping_; });
    const auto cutoff = std::chrono::steady_clock::now() - idle_timeout_;
    std::vector<std::unique_ptr<PgConnection>> expired;
    for (auto it = idle_.begin(); it != idle_.end();) {
      auto& sessions = it->second;
      // Oldest first: they expire first.
      std::size_t keep_from = 0;
      while (keep_from < sessions.size() && (stopping_ || sessions[keep_from].since < cutoff)) ++keep_from;
      for (std::size_t i = 0; i < keep_from; ++i) expired.push_back(std::move(sessions[i].connection));
      sessions.erase(sessions.begin(), sessions.begin() + static_cast<std::ptrdiff_t>(keep_from));
      it = sessions.empty() ? idle_.erase(it) : std::next(it);
    }
    // Closing sends a message to each server: not under the lock.
    lock.unlock();
    expired.clear();
    lock.lock();
  }
}

std::size_t ConnectionPool::idle() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::size_t n = 0;
  for (const auto& [key, sessions] : idle_) n += sessions.size();
  return n;
}

std::size_t ConnectionPool::opened() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return opened_;
}

PooledConnection open_session(const Config& config, const std::string& name, SessionKind kind) {
  const Endpoint target = resolve(config, name, kind);
  return PooledConnection(nullptr, target.key, open(target, name, kind));
}

}  // namespace tidemark
