// Sessions to the configured databases, reused across runs (SPEC §7), so a
// run of an unchanged table costs a few statements, not new sessions. Per
// connection name (and DSN, and kind) at most `max_idle` sessions wait
// idle; one idle for longer than `idle_timeout` is closed. On checkout a
// session the server has closed meanwhile (a restart) is replaced, never
// handed out, and one whose last user failed on it or changed it
// (PgConnection::needs_reset) is reset first (DISCARD ALL: no lock, temp
// table or setting of an earlier run survives). One its last user left as
// found is handed out as it is, with the statements prepared on it: a run
// of an unchanged table then costs no statement for the session itself. Thread-safe: workers
// check sessions out and back in concurrently; a background thread closes
// idle ones.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/config/config_model.h"
#include "daemon/pg/libpq/pg_connection.h"

namespace tidemark {

class ConnectionPool;

enum class SessionKind {
  ReadWrite,  // state and target
  Source,     // read-only (make_read_only_source)
};

// One session, checked out of a pool (or owned outright when it has no
// pool). Goes back to its pool when reset or destroyed, unless it is no
// longer reusable (broken, inside a transaction, poisoned): then it closes.
// Move-only; used by one thread at a time.
class PooledConnection {
 public:
  PooledConnection() = default;
  PooledConnection(ConnectionPool* pool, std::string key, std::unique_ptr<PgConnection> connection)
      : pool_(pool), key_(std::move(key)), connection_(std::move(connection)) {}
  ~PooledConnection() { reset(); }
  PooledConnection(PooledConnection&& other) noexcept = default;
  PooledConnection& operator=(PooledConnection&& other) noexcept {
    if (this != &other) {
      reset();
      pool_ = other.pool_;
      key_ = std::move(other.key_);
      connection_ = std::move(other.connection_);
    }
    return *this;
  }
  PooledConnection(const PooledConnection&) = delete;
  PooledConnection& operator=(const PooledConnection&) = delete;

  PgConnection& operator*() const { return *connection_; }
  PgConnection* operator->() const { return connection_.get(); }
  PgConnection* get() const { return connection_.get(); }
  explicit operator bool() const { return connection_ != nullptr; }

  // Gives the session back (or closes it) now.
  void reset();

 private:
  ConnectionPool* pool_ = nullptr;
  std::string key_;
  std::unique_ptr<PgConnection> connection_;
};

class ConnectionPool {
 public:
  ConnectionPool(std::size_t max_idle, std::chrono::seconds idle_timeout);
  ~ConnectionPool();
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;

  // A session to connection `name` of `config`: an idle one that passes
  // its reset, else a new one. Throws std::runtime_error or PgError when
  // no session can be had (the DSN cannot be resolved, the database is down).
  PooledConnection acquire(const Config& config, const std::string& name, SessionKind kind);

  // Figures for tests and the benchmarks.
  std::size_t idle() const;
  std::size_t opened() const;

 private:
  friend class PooledConnection;
  struct Idle {
    std::unique_ptr<PgConnection> connection;
    std::chrono::steady_clock::time_point since;
  };

  // Takes a session back; closes it when it is not reusable or the pool
  // for its key is full.
  void give_back(const std::string& key, std::unique_ptr<PgConnection> connection);
  void reap_idle();

  const std::size_t max_idle_;
  const std::chrono::seconds idle_timeout_;
  mutable std::mutex mutex_;
  std::map<std::string, std::vector<Idle>> idle_;  // newest last
  std::size_t opened_ = 0;
  bool stopping_ = false;
  std::condition_variable wake_;
  std::thread reaper_;
};

// Opens a new session of `kind` to connection `name`, outside any pool.
// Throws like ConnectionPool::acquire.
PooledConnection open_session(const Config& config, const std::string& name, SessionKind kind);

}  // namespace tidemark
