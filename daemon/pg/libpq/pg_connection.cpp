#include "daemon/pg/libpq/pg_connection.h"

#include <libpq-fe.h>

#include <algorithm>
#include <limits>
#include <type_traits>

#include <poll.h>

#include <cerrno>
#include <cstdlib>

#include "core/config/dsn_mask.h"
#include "core/run/cancel_token.h"
#include "daemon/pg/libpq/pg_copy_reader.h"
#include "daemon/pg/libpq/read_together.h"

namespace tidemark {

static_assert(std::is_same_v<Oid, PgOid>, "PgOid must be libpq's Oid");

bool PgConnection::is_ok() const { return PQstatus(conn_) == CONNECTION_OK; }
int PgConnection::backend_pid() const { return PQbackendPID(conn_); }
int PgConnection::server_major_version() const { return PQserverVersion(conn_) / 10000; }
bool PgConnection::reusable() const {
  return PQstatus(conn_) == CONNECTION_OK && PQtransactionStatus(conn_) == PQTRANS_IDLE && !poisoned_;
}

bool PgConnection::in_transaction() const { return PQtransactionStatus(conn_) == PQTRANS_INTRANS; }

const char* const kPinnedSessionSettings =
    "SET DateStyle = 'ISO, YMD'; SET IntervalStyle = 'postgres'; SET extra_float_digits = 3;"
    " SET bytea_output = 'hex'; SET lc_monetary = 'C'; SET xmloption = 'content'; SET array_nulls = on;"
    " SET standard_conforming_strings = on; SET client_encoding = 'UTF8';"
    " SET default_transaction_isolation = 'read committed'";

namespace {

// The server's end of the session probes as this end does, with the
// values the session was opened with (the DSN's own, when it set any), so
// that a client that vanished (its host lost, its packets dropped) loses
// its session, and the locks it holds, within the same time:
// - keepalives, for a session left idle or waiting for the client;
// - tcp_user_timeout at the same bound, for a reply left unacknowledged
//   (keepalives do not probe while data is in flight). It also ends a
//   live client's session whose window stays closed that long: sessions
//   read together (read_together.h) are read while another is waited
//   on, and a query copied one result at a time lifts it for its
//   transaction (PgCopyStream::copy_query);
// - client_connection_check_interval (PostgreSQL 14 on, where the server's
//   platform can tell a closed socket: `check_interval`), for a statement
//   still running or waiting for a lock: it ends once the socket is dead.
// Over a Unix socket the server ignores the TCP settings.
std::string server_keepalives(PGconn* conn, bool check_interval) {
  std::string enabled = "1";
  long idle = -1, interval = -1, count = -1;
  const auto seconds = [](const char* value) {
    // libpq took the value; only plain digits go into the statement.
    const std::string text = value;
    if (text.empty() || text.size() > 6 || text.find_first_not_of("0123456789") != std::string::npos) return -1L;
    return std::stol(text);
  };
  PQconninfoOption* options = PQconninfo(conn);
  for (PQconninfoOption* o = options; o != nullptr && o->keyword != nullptr; ++o) {
    if (o->val == nullptr) continue;
    const std::string keyword = o->keyword;
    if (keyword == "keepalives") enabled = o->val;
    if (keyword == "keepalives_idle") idle = seconds(o->val);
    if (keyword == "keepalives_interval") interval = seconds(o->val);
    if (keyword == "keepalives_count") count = seconds(o->val);
  }
  PQconninfoFree(options);
  if (enabled == "0" || idle <= 0 || interval <= 0 || count <= 0) return {};
  // Milliseconds, within the server's integer settings (a DSN may ask for
  // more than they hold).
  constexpr long kMostMillis = std::numeric_limits<int>::max();
  const long dead_after_ms = std::min((idle + interval * count) * 1000, kMostMillis);
  std::string sql = "; SET tcp_keepalives_idle = " + std::to_string(idle) +
                    "; SET tcp_keepalives_interval = " + std::to_string(interval) +
                    "; SET tcp_keepalives_count = " + std::to_string(count) +
                    "; SET tcp_user_timeout = " + std::to_string(dead_after_ms);
  if (check_interval && PQserverVersion(conn) >= 140000) {
    sql += "; SET client_connection_check_interval = " + std::to_string(std::min(interval * 1000, kMostMillis));
  }
  return sql;
}

}  // namespace

std::vector<const char*> PgConnection::param_values(const PgParams& params) {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
  return values;
}

std::string PgConnection::first_line(const std::string& sql) {
  const std::size_t start = std::min(sql.find_first_not_of(" \t\r\n"), sql.size());
  const std::string line = sql.substr(start, sql.find('\n', start) - start);
  if (line.size() <= 80) return line;
  // Cut at a character's first byte: half a UTF-8 character is no text.
  std::size_t cut = 77;
  while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;
  return line.substr(0, cut) + "...";
}

PgConnection::PgConnection(const std::string& dsn, std::string label, const KeepaliveTimes& keepalives)
    : label_(std::move(label)) {
  // Defaults first: a later keyword (the expanded DSN) overrides them. The
  // user timeout bounds a wait on a server that vanished while this end
  // was sending; it is no shorter because it also ends a stream the server
  // stopped reading for that long (a live server held up by a lock).
  const std::string idle = std::to_string(keepalives.idle.count());
  const std::string interval = std::to_string(keepalives.interval.count());
  const std::string count = std::to_string(keepalives.count);
  const char* const keywords[] = {"connect_timeout", "keepalives", "keepalives_idle", "keepalives_interval",
                                  "keepalives_count", "tcp_user_timeout", "application_name", "dbname", nullptr};
  const char* const values[] = {"10", "1", idle.c_str(), interval.c_str(), count.c_str(), "60000", "tidemark",
                                dsn.c_str(), nullptr};
  conn_ = PQconnectdbParams(keywords, values, /*expand_dbname=*/1);
  // A connection that could not be made may be made at the next try.
  if (conn_ == nullptr) throw PgError(ErrorKind::Transient, "cannot connect to " + label_ + ": out of memory");
  if (PQstatus(conn_) != CONNECTION_OK) {
    const std::string message = scrub_password(connection_error_text(conn_), dsn);
    PQfinish(conn_);
    conn_ = nullptr;
    throw PgError(ErrorKind::Transient, "cannot connect to " + label_ + ": " + message);
  }
  // Server notices ("schema already exists, skipping") are not for the user.
  PQsetNoticeProcessor(conn_, [](void*, const char*) {}, nullptr);
  try {
    // The last statement's answer: which server process runs the session.
    const auto pin = [&](bool check_interval) {
      session_settings_ = kPinnedSessionSettings + server_keepalives(conn_, check_interval);
      direct_ = exec(session_settings_ + "; SELECT pg_backend_pid()").integer(0, 0) == PQbackendPID(conn_);
    };
    try {
      pin(/*check_interval=*/true);
    } catch (const PgError& e) {
      // A server whose platform cannot tell a closed socket refuses any
      // interval but 0 (invalid_parameter_value): pinned without it.
      if (e.sqlstate() != "22023") throw;
      pin(/*check_interval=*/false);
    }
    needs_reset_ = false;  // nothing of the refused statement stayed: it ran as one transaction
    own_time_zone_ = reported("TimeZone");
  } catch (const PgError&) {
    PQfinish(conn_);
    conn_ = nullptr;
    throw;
  }
}

PgConnection::~PgConnection() {
  if (conn_) PQfinish(conn_);
}

void PgConnection::fail(const std::string& what, const PGresult* result) {
  needs_reset_ = true;
  throw PgError::from_libpq(label_ + ": " + what, result, conn_);
}

PgResult PgConnection::check(PGresult* raw, const std::string& sql) {
  PgResult result(raw);
  const ExecStatusType status = PQresultStatus(raw);
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) fail(first_line(sql), raw);
  return result;
}

PGresult* PgConnection::awaited_results(bool sent, const std::string& sql) {
  if (!sent) fail(first_line(sql));
  std::unique_ptr<PGresult, decltype(&PQclear)> last(nullptr, &PQclear);
  for (;;) {
    await_result(nullptr);
    PGresult* result = PQgetResult(conn_);
    if (result == nullptr) return last.release();
    last.reset(result);
    const ExecStatusType status = PQresultStatus(result);
    // As PQexec: a COPY under way is its caller's, and nothing after a
    // failed statement runs.
    if (status == PGRES_COPY_IN || status == PGRES_COPY_OUT) return last.release();
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
      drain_results();
      return last.release();
    }
  }
}

PgResult PgConnection::exec(const std::string& sql) {
  if (!sent_.empty()) std::abort();  // a statement sent is finished first; libpq would swallow its result
  if (together_ != nullptr) return check(awaited_results(PQsendQuery(conn_, sql.c_str()) == 1, sql), sql);
  return check(PQexec(conn_, sql.c_str()), sql);
}

PgResult PgConnection::exec(const std::string& sql, const PgParams& params) { return exec(sql, params, {}); }

PgResult PgConnection::exec(const std::string& sql, const PgParams& params, const std::vector<PgOid>& types) {
  if (!types.empty() && types.size() != params.size()) std::abort();  // a type for each parameter, or none
  if (!sent_.empty()) std::abort();  // a statement sent is finished first; libpq would swallow its result
  const std::vector<const char*> values = param_values(params);
  const int count = static_cast<int>(values.size());
  const PgOid* typed = types.empty() ? nullptr : types.data();
  if (together_ != nullptr) {
    const bool sent = PQsendQueryParams(conn_, sql.c_str(), count, typed, values.data(), nullptr, nullptr, 0) == 1;
    return check(awaited_results(sent, sql), sql);
  }
  return check(PQexecParams(conn_, sql.c_str(), count, typed, values.data(), nullptr, nullptr, 0), sql);
}

PgResult PgConnection::exec_prepared(const std::string& sql, const PgParams& params) {
  if (!direct_) return exec(sql, params);
  if (!sent_.empty()) std::abort();  // a statement sent is finished first; libpq would swallow its result
  // Statements whose text names a table are not for here (one per table
  // would pile up on the server): past this many, start again.
  static constexpr std::size_t kMostPrepared = 64;
  auto it = prepared_.find(sql);
  if (it == prepared_.end()) {
    if (prepared_.size() >= kMostPrepared) {
      exec("DEALLOCATE ALL");
      prepared_.clear();
    }
    const std::string name = "tidemark_" + std::to_string(prepared_.size() + 1);
    const int count = static_cast<int>(params.size());
    check(together_ != nullptr
              ? awaited_results(PQsendPrepare(conn_, name.c_str(), sql.c_str(), count, nullptr) == 1, sql)
              : PQprepare(conn_, name.c_str(), sql.c_str(), count, nullptr),
          sql);
    it = prepared_.emplace(sql, name).first;
  }
  const std::vector<const char*> values = param_values(params);
  const int count = static_cast<int>(values.size());
  if (together_ != nullptr) {
    const bool sent = PQsendQueryPrepared(conn_, it->second.c_str(), count, values.data(), nullptr, nullptr, 0) == 1;
    return check(awaited_results(sent, sql), sql);
  }
  return check(PQexecPrepared(conn_, it->second.c_str(), count, values.data(), nullptr, nullptr, 0), sql);
}

bool PgConnection::closed_by_server() {
  if (PQstatus(conn_) != CONNECTION_OK) return true;
  pollfd socket{PQsocket(conn_), POLLIN, 0};
  if (::poll(&socket, 1, 0) <= 0) return false;  // nothing arrived: still open as far as can be told
  // Something arrived unasked: a server ending the session says why, then
  // closes it. Whatever it was, the session is not known to be sound.
  PQconsumeInput(conn_);
  return true;
}

std::vector<std::string> PgConnection::wait_for_notifications(std::chrono::milliseconds timeout) {
  std::vector<std::string> payloads;
  const auto take = [&] {
    while (PGnotify* n = PQnotifies(conn_)) {
      payloads.emplace_back(n->extra);
      PQfreemem(n);
    }
  };
  take();  // some may have come in with a statement's result
  if (!payloads.empty()) return payloads;
  pollfd socket{PQsocket(conn_), POLLIN, 0};
  const int ready = ::poll(&socket, 1, static_cast<int>(timeout.count()));
  if (ready < 0 && errno != EINTR) fail("waiting for notifications");
  if (ready > 0 && PQconsumeInput(conn_) == 0) fail("reading notifications");
  take();
  if (PQstatus(conn_) != CONNECTION_OK) fail("waiting for notifications");
  return payloads;
}

std::optional<PgError> PgConnection::drain_results(const std::string& context) {
  std::optional<PgError> error;
  while (PGresult* r = PQgetResult(conn_)) {
    const ExecStatusType status = PQresultStatus(r);
    if (!error && status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK && !server_error_text(r).empty()) {
      error = PgError::from_libpq(context, r, conn_);
    }
    PQclear(r);
  }
  return error;
}

void PgConnection::request_cancel() {
  needs_reset_ = true;
  if (PGcancel* cancel = PQgetCancel(conn_)) {
    char buffer[256];
    PQcancel(cancel, buffer, sizeof buffer);
    PQfreeCancel(cancel);
  }
}

void PgConnection::abandon_copy_out() {
  request_cancel();
  // A COPY whose first result was never asked for (the other side of a
  // diff failed first) is not under way as libpq sees it until that
  // result is read: only then are its rows discarded. Results asked for
  // while rows remain are the COPY's own, again and again, for good.
  while (PGresult* r = PQgetResult(conn_)) {
    const bool copying = PQresultStatus(r) == PGRES_COPY_OUT;
    PQclear(r);
    if (!copying) continue;
    char* data = nullptr;
    while (PQgetCopyData(conn_, &data, 0) > 0) PQfreemem(data);
  }
}

void PgConnection::send(const std::string& sql, const PgParams& params, const std::vector<PgOid>& types) {
  if (!types.empty() && types.size() != params.size()) std::abort();  // a type for each parameter, or none
  if (!sent_.empty()) std::abort();  // one statement in flight at a time
  const std::vector<const char*> values = param_values(params);
  if (!PQsendQueryParams(conn_, sql.c_str(), static_cast<int>(values.size()), types.empty() ? nullptr : types.data(),
                         values.data(), nullptr, nullptr, 0)) {
    fail(first_line(sql));
  }
  sent_ = sql;
}

PgResult PgConnection::finish(const CancelToken* cancel) {
  if (sent_.empty()) std::abort();  // finish() collects what send() sent
  const std::string sql = std::move(sent_);
  sent_.clear();
  const bool cancelled = await_result(cancel);
  PGresult* first = PQgetResult(conn_);
  // One statement, one result: read on to the end either way.
  std::optional<PgError> rest = drain_results(label_ + ": " + first_line(sql));
  if (cancelled) {
    needs_reset_ = true;
    PQclear(first);
    throw PgError(ErrorKind::Transient, label_ + ": " + first_line(sql) + ": " + cancel->reason());
  }
  PgResult result = check(first, sql);
  if (rest) {
    needs_reset_ = true;
    throw *rest;
  }
  return result;
}

PgResult PgConnection::exec(const std::string& sql, const CancelToken& cancel) {
  send(sql, {});
  return finish(&cancel);
}

bool PgConnection::await_result(const CancelToken* cancel) {
  bool requested = false;
  for (;;) {
    if (!PQconsumeInput(conn_)) return requested;  // the connection broke: PQgetResult says how
    if (!PQisBusy(conn_)) return requested;
    if (!requested && cancel != nullptr && cancel->cancelled()) {
      request_cancel();
      requested = true;
    }
    // A signal sets the token without waking the wait: look again within
    // a tenth of a second.
    wait_readable(std::chrono::milliseconds(100));
  }
}

void PgConnection::wait_readable(std::chrono::milliseconds timeout, bool writing) {
  // A server may stop reading until what it sends is read: a writer
  // waits for either.
  const short events = writing ? POLLIN | POLLOUT : POLLIN;
  if (together_ != nullptr) {
    try {
      together_->wait(*this, events, timeout);
    } catch (...) {
      // Its own statement is left unfinished: it stops, so that a
      // rollback does not wait for it.
      request_cancel();
      needs_reset_ = true;
      throw;
    }
    return;
  }
  pollfd socket{PQsocket(conn_), events, 0};
  ::poll(&socket, 1, static_cast<int>(timeout.count()));  // an error shows in the read that follows
}

void PgConnection::read_arrived() {
  // Until the socket is empty: a receiver tells the sender its window
  // opened only once a good part of its buffer is free, and one read
  // takes in as little as libpq's buffer holds. Bounded in time, as the
  // server keeps sending while this end reads.
  const auto started = std::chrono::steady_clock::now();
  last_read_ = started;
  do {
    if (reader_ != nullptr) {
      if (!reader_->take_arrived()) return;
    } else if (!PQconsumeInput(conn_) || !PQisBusy(conn_)) {
      return;  // the result is in, or the connection broke: its own read says which
    }
    pollfd socket{PQsocket(conn_), POLLIN, 0};
    if (::poll(&socket, 1, 0) <= 0) return;
  } while (std::chrono::steady_clock::now() - started < kLongestReadAhead);
}

constexpr std::chrono::milliseconds PgConnection::kLongestReadAhead;

bool PgConnection::answering() const { return PQtransactionStatus(conn_) == PQTRANS_ACTIVE; }

int PgConnection::socket() const { return PQsocket(conn_); }

void PgConnection::reset(const std::string& then) {
  // What DISCARD ALL does, statement by statement: DISCARD ALL itself
  // refuses to run in a transaction, which several statements in one
  // string are, and would cost a round trip of its own.
  static const std::string kDiscard =
      "CLOSE ALL; SET SESSION AUTHORIZATION DEFAULT; RESET ALL; DEALLOCATE ALL; UNLISTEN *;"
      " SELECT pg_advisory_unlock_all(); DISCARD PLANS; DISCARD TEMP; DISCARD SEQUENCES; ";
  exec(kDiscard + session_settings_ + (then.empty() ? std::string() : "; " + then));
  prepared_.clear();
  needs_reset_ = false;
}

void PgConnection::set_time_zone(const std::string& zone) {
  // The server reports every change of its zone: a session already in
  // `zone` needs no statement.
  if (reported("TimeZone") == zone) return;
  exec("SELECT set_config('TimeZone', $1, false)", {zone});
}

void PgConnection::adopt_time_zone(const PgConnection& other) {
  // A server that does not report its zone, or reports the host's
  // (localtime), names none this session could take: it goes back to its
  // own, which an earlier user of a pooled session may have changed.
  const std::string zone = other.reported("TimeZone");
  if (zone.empty() || zone == "localtime") {
    if (reported("TimeZone") != own_time_zone_) exec("RESET TimeZone");
    return;
  }
  set_time_zone(zone);
}

std::string PgConnection::endpoint() const {
  const auto text = [](const char* value) { return std::string(value != nullptr ? value : ""); };
  return label_ + '\n' + text(PQhost(conn_)) + '\n' + text(PQport(conn_)) + '\n' + text(PQdb(conn_)) + '\n' +
         text(PQuser(conn_));
}

std::string PgConnection::reported(const char* setting) const {
  const char* value = PQparameterStatus(conn_, setting);
  return value ? value : "";
}

void PgConnection::rollback_quietly() {
  if (!conn_ || PQstatus(conn_) != CONNECTION_OK) return;
  if (!sent_.empty()) {
    sent_.clear();
    request_cancel();
    drain_results();
  }
  if (PQtransactionStatus(conn_) == PQTRANS_IDLE) return;
  // A transaction given up midway: what its session holds besides is
  // nobody's to vouch for.
  needs_reset_ = true;
  PQclear(PQexec(conn_, "ROLLBACK"));
}

}  // namespace tidemark
