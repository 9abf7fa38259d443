#include "daemon/pg/libpq/session_probe.h"

#include <libpq-fe.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <optional>

#include "core/config/dsn_mask.h"
#include "daemon/pg/libpq/pg_error.h"

namespace tidemark {
namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr const char* kNoAnswer = "no answer within the probe's time";

// The probe's own session, driven through libpq without blocking: a pooler
// with no free server queues a client for as long as it is configured to
// (PgBouncer: query_wait_timeout, 2 minutes by default), and the probe must
// not wait that long. Errors come back as text without the DSN's password.
class ProbeSession {
 public:
  ProbeSession(std::string dsn, SteadyClock::time_point deadline) : dsn_(std::move(dsn)), deadline_(deadline) {}
  ~ProbeSession() {
    // Closing is also how a query still queued in the pooler is dropped.
    if (conn_) PQfinish(conn_);
  }
  ProbeSession(const ProbeSession&) = delete;
  ProbeSession& operator=(const ProbeSession&) = delete;

  // Empty when connected, else why not.
  std::string connect() {
    const char* const keywords[] = {"application_name", "dbname", nullptr};
    const char* const values[] = {"tidemark (session probe)", dsn_.c_str(), nullptr};
    conn_ = PQconnectStartParams(keywords, values, /*expand_dbname=*/1);
    if (conn_ == nullptr) return "out of memory";
    if (PQstatus(conn_) == CONNECTION_BAD) return error_text();
    // libpq's own connect_timeout does not apply to a connection driven
    // by PQconnectPoll; the deadline does.
    PostgresPollingStatusType status = PGRES_POLLING_WRITING;
    for (;;) {
      if (status == PGRES_POLLING_OK) return {};
      if (status == PGRES_POLLING_FAILED) return error_text();
      if (!wait_for_socket(status == PGRES_POLLING_WRITING)) return "no connection within the probe's time";
      status = PQconnectPoll(conn_);
    }
  }

  // The pid of the server process that ran `select pg_backend_pid()` for
  // this session, or nothing, with `error` set.
  std::optional<int> backend_pid(std::string& error) {
    if (!PQsendQuery(conn_, "select pg_backend_pid()")) {
      error = error_text();
      return std::nullopt;
    }
    std::optional<int> pid;
    for (;;) {
      if (!PQconsumeInput(conn_)) {
        error = error_text();
        return std::nullopt;
      }
      if (PQisBusy(conn_)) {
        if (!wait_for_socket(false)) {
          error = kNoAnswer;
          return std::nullopt;
        }
        continue;
      }
      PGresult* result = PQgetResult(conn_);
      if (result == nullptr) break;
      if (PQresultStatus(result) == PGRES_TUPLES_OK && PQntuples(result) == 1) {
        pid = std::atoi(PQgetvalue(result, 0, 0));
      } else if (error.empty()) {
        error = trimmed_message(PQresultErrorMessage(result));
      }
      PQclear(result);
    }
    if (!pid && error.empty()) error = "no answer to select pg_backend_pid()";
    return error.empty() ? pid : std::nullopt;
  }

 private:
  std::string error_text() const { return scrub_password(trimmed_message(PQerrorMessage(conn_)), dsn_); }

  // False when the deadline passed first.
  bool wait_for_socket(bool for_write) const {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - SteadyClock::now()).count();
    if (left <= 0) return false;
    pollfd fd{PQsocket(conn_), static_cast<short>(for_write ? POLLOUT : POLLIN), 0};
    int ready = 0;
    do {
      ready = ::poll(&fd, 1, static_cast<int>(left));
    } while (ready < 0 && errno == EINTR);
    return ready != 0;  // an error on the socket is libpq's to report
  }

  std::string dsn_;
  SteadyClock::time_point deadline_;
  PGconn* conn_ = nullptr;
};

std::string refusal(const std::string& who, const std::string& seen) {
  return who + " does not keep its session between transactions (" + seen +
         "): it goes through a pooler in transaction or statement mode, such as PgBouncer with"
         " pool_mode = transaction. tidemark holds each table's advisory lock on the state session for a"
         " whole run and checks it as each chunk commits; through such a pooler the check fails, runs of"
         " one table can overlap, and a lock can stay behind on a pooled server session. Use"
         " pool_mode = session for the state database in PgBouncer, or connect the state connection"
         " directly to PostgreSQL";
}

}  // namespace

SessionProbe probe_session(PgConnection& state, const std::string& dsn, const SessionProbeOptions& options) {
  SessionProbe probe;
  const std::string who = "the state connection \"" + state.label() + "\"";
  const auto unknown = [&](const std::string& why) {
    probe.verdict = SessionVerdict::Unknown;
    probe.message = "cannot tell whether " + who + " keeps its session between transactions: " + why;
    return probe;
  };
  const auto not_kept = [&](const std::string& seen) {
    probe.verdict = SessionVerdict::NotKept;
    probe.message = refusal(who, seen);
    return probe;
  };
  try {
    // The first statement of a transaction is stamped with the
    // transaction's start; a later one is not. Inside a transaction a
    // transaction pooler pins the session too, and the probe would see a
    // session pooler.
    ++probe.statements;
    const PgResult first = state.exec("select pg_backend_pid(), transaction_timestamp() = statement_timestamp()");
    if (!first.boolean(0, 1)) return unknown("it is inside a transaction");
    const int state_pid = static_cast<int>(first.integer(0, 0));
    // libpq learns the backend's pid when it connects; a pooler answers the
    // connection itself and hands out a key of its own.
    if (state_pid == state.backend_pid()) {
      probe.verdict = SessionVerdict::Kept;
      return probe;
    }
    probe.through_pooler = true;

    ProbeSession own(dsn, SteadyClock::now() + options.wait);
    if (const std::string error = own.connect(); !error.empty()) {
      return unknown("opening a second session to compare with: " + error);
    }
    const auto moved = [](int from, int to) {
      return "one session's transactions ran on server processes " + std::to_string(from) + " and " +
             std::to_string(to);
    };
    std::optional<int> own_pid;  // never state_pid: that ends the probe
    for (int round = 0; round < std::max(options.rounds, 1); ++round) {
      ++probe.statements;
      const int state_now = static_cast<int>(state.exec("select pg_backend_pid()").integer(0, 0));
      if (state_now != state_pid) return not_kept(moved(state_pid, state_now));
      ++probe.statements;
      std::string error;
      const std::optional<int> own_now = own.backend_pid(error);
      if (!own_now && error == kNoAnswer) {
        return unknown("a second session got no server through the pooler within " +
                       std::to_string(options.wait.count()) +
                       " ms; in session mode every session needs a server connection of its own, so the pool"
                       " may be full");
      }
      if (!own_now) return unknown("a second session failed: " + error);
      if (*own_now == state_pid) {
        return not_kept("two sessions' transactions ran on server process " + std::to_string(state_pid) +
                        " in turn");
      }
      if (own_pid && *own_now != *own_pid) return not_kept(moved(*own_pid, *own_now));
      own_pid = own_now;
    }
    probe.verdict = SessionVerdict::Kept;
    return probe;
  } catch (const PgError& e) {
    return unknown(e.what());
  }
}

}  // namespace tidemark
