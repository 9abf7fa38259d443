// Tells, at start-up, whether the state connection keeps one server
// session between its transactions, as the per-run advisory lock needs
// (a direct connection or PgBouncer in session mode does; PgBouncer in
// transaction or statement mode does not). Runs on the calling thread and
// uses `state` meanwhile; its own session waits at most `wait`.
#pragma once

#include <chrono>
#include <string>

#include "daemon/pg/libpq/pg_connection.h"

namespace tidemark {

enum class SessionVerdict {
  Kept,     // every transaction of a client runs on that client's own server session
  NotKept,  // each transaction goes to whichever server session is free: refuse to run
  Unknown,  // the probe could not finish (database down, the pooler's pool full): decided nothing
};

struct SessionProbe {
  SessionVerdict verdict = SessionVerdict::Unknown;
  // Empty when Kept. For NotKept the refusal, naming the connection, what
  // was seen, why tidemark cannot work so and what to change; for Unknown,
  // what stopped the probe.
  std::string message;
  // Something between tidemark and PostgreSQL answered the connection (its
  // backend key is not the server process's), so the full probe ran.
  bool through_pooler = false;
  // Statements sent, on `state` and on the probe's own session.
  int statements = 0;
};

struct SessionProbeOptions {
  // Rounds of the full probe: one settles it on a quiet pool, more keep
  // other clients' traffic from hiding it.
  int rounds = 3;
  // The most the probe's own session waits, to connect and to be answered,
  // in all: a pooler queues a client while its pool has no free server.
  std::chrono::milliseconds wait{5000};
};

// `state` must be open and outside any transaction; `dsn` is the
// connection string it was opened with: when `state` goes through a
// pooler, the probe opens one more session from it, and closes it. On
// `state` the probe only runs `select pg_backend_pid()` as single-statement
// transactions, so it leaves nothing behind on any server session and
// never holds a pooled server while waiting for another. A direct
// connection is recognised from the first answer: one round trip.
//
// Through a pooler, `state` (S) and the probe's session (P) each ask which
// server process runs them: S twice, then P, then S and P in turn for the
// other rounds. A session pooler gives S one server process and P another
// for their whole lives. A transaction pooler puts the server back in its
// pool after each transaction: reusing the most recently freed one first
// (PgBouncer's default), P gets the one S has just left; reusing the least
// recently freed first (server_round_robin = 1), S's second transaction
// gets another one when the pool holds two or more, and when it holds one,
// P shares it. Either shows in the first round on a quiet pool.
SessionProbe probe_session(PgConnection& state, const std::string& dsn, const SessionProbeOptions& options = {});

}  // namespace tidemark
