// One libpq connection, used directly rather than through libpqxx (why:
// docs/ARCHITECTURE.md, "The PostgreSQL client"): it never reconnects
// behind our back, binds typed parameters and streams rows (COPY: through
// PgCopyStream and PgCopyReader). Owned by one run or command at a time;
// not thread-safe. Failures throw PgError, turned into values at this
// edge (as_result); libpq stays in daemon/pg's .cpp files.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/config/config_model.h"
#include "core/fleet/keepalive_times.h"
#include "core/result.h"
#include "daemon/pg/libpq/pg_error.h"
#include "daemon/pg/libpq/pg_result.h"

namespace tidemark {

class PgCopyReader;
class ReadTogether;
class RunMeter;

// A type's OID, as libpq's Oid (checked where libpq is included).
using PgOid = unsigned int;

class CancelToken;

using PgParams = std::vector<std::optional<std::string>>;

// The settings every session tidemark opens reads and writes values in,
// set once it is open and again whenever it is reset, so that nothing the
// server, a database or role default or the DSN's `options` set can change
// a value on its way. Text one session prints is what the other parses: a
// date in ISO order (under "SQL, DMY" 2026-04-03 prints as 03/04/2026 and
// a timestamptz with a zone abbreviation another server reads otherwise),
// an interval in postgres style, a float to its last digit, bytea in hex,
// money in the C locale, XML as content, NULL in an array as NULL, in
// UTF-8 on both sides (binary COPY sends text in the client encoding too).
// Every statement takes its own snapshot (read committed): a snapshot of
// the whole transaction taken before a statement waited for a lock would
// see a table rewritten meanwhile as empty. The time zone is not pinned:
// a source's is the zone of its wall-clock values, and a target follows
// its source's (adopt_time_zone).
extern const char* const kPinnedSessionSettings;

class PgConnection {
 public:
  // Connects with a connect timeout and TCP keepalives, which the DSN may
  // override, and pins kPinnedSessionSettings. The server's end of the
  // session is told to give up on this end after `keepalives` (keepalives,
  // user timeout, client connection checks; set again on every reset), so
  // that a vanished client's session, and the locks it holds, end within
  // `keepalives.dead_after()` of its last word.
  // `label` (a connection name) appears in errors; the DSN never does, so
  // no password can leak. Throws PgError.
  PgConnection(const std::string& dsn, std::string label,
               const KeepaliveTimes& keepalives = KeepaliveTimes::for_lease(FleetConfig{}.lease));
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // Runs one statement (or several, without params). Throws PgError.
  PgResult exec(const std::string& sql);
  PgResult exec(const std::string& sql, const PgParams& params);
  // With the parameters' types (OIDs), for a query that leaves them untyped.
  PgResult exec(const std::string& sql, const PgParams& params, const std::vector<PgOid>& types);
  // Runs one statement whose text does not change from call to call (its
  // values all bound), planned once per session: prepared on first use
  // and kept until the session is reset. Planning a catalog query costs
  // more than running it. Through a pooler (the server process is not the
  // one the connection reported) it is planned each time instead, as a
  // pooler may hand the next statement to another server. Throws PgError.
  PgResult exec_prepared(const std::string& sql, const PgParams& params);

  // Sends one statement without waiting for it, so that statements on two
  // connections run at once; finish() waits for its result. In between
  // the connection takes no other statement (rollback_quietly cancels it).
  // `types`, when given, are the parameters' (as exec's). Throws PgError.
  void send(const std::string& sql, const PgParams& params, const std::vector<PgOid>& types = {});
  // The result of the statement send() sent. Throws PgError. With
  // `cancel`, a cancel while it waits cancels the statement on the server
  // and throws PgError with the token's reason.
  PgResult finish(const CancelToken* cancel = nullptr);
  // One statement (no params) as send() then finish(&cancel): for the
  // long ones a signal must be able to stop.
  PgResult exec(const std::string& sql, const CancelToken& cancel);

  // After LISTEN on this session: waits up to `timeout` for notifications
  // and returns their payloads, oldest first (none when the time passed).
  // Throws PgError when the session fails.
  std::vector<std::string> wait_for_notifications(std::chrono::milliseconds timeout);

  // Wipes whatever an earlier user left on the session (what DISCARD ALL
  // wipes: locks, temp tables, prepared statements, settings) and pins
  // the session's pinned settings again, then runs `then` (more settings), all in
  // one round trip. Throws PgError.
  void reset(const std::string& then = {});
  // Whether the session may hold something a later user must not inherit
  // and so needs reset() before it serves one: set by every failure and
  // cancel on it (a statement that failed may have left a transaction, a
  // cursor or a setting half done) and by mark_session_changed(). Users
  // that end well leave a session as they found it: a lock taken is
  // released, a setting changed is set back, temp tables drop on commit.
  bool needs_reset() const { return needs_reset_; }
  // Says that this user changed the session on purpose (a setting, a lock,
  // a cursor held across transactions) and leaves the change behind.
  void mark_session_changed() { needs_reset_ = true; }
  // Without a round trip: whether the server has closed the session (a
  // restart, a terminated backend) since it was last used.
  bool closed_by_server();
  // Sets this session's time zone to `other`'s: values converted between
  // types on their way between the two (a timestamp into a timestamptz, a
  // timestamptz into a date) are then read as `other` reads them. Takes
  // its own (the one it had when it connected) when `other` reports none
  // it could take. Throws PgError.
  void adopt_time_zone(const PgConnection& other);
  // Sets this session's time zone (an IANA name). Throws PgError.
  void set_time_zone(const std::string& zone);
  // A setting the server reports on its own (TimeZone, DateStyle,
  // server_version, ...), as last reported; empty when it reported none.
  std::string reported(const char* setting) const;

  // Rolls back an open or failed transaction, cancelling a statement sent
  // and not finished; swallows errors (used on paths that are already
  // failing).
  void rollback_quietly();

  bool is_ok() const;
  int backend_pid() const;
  // The server's major version (15 for 15.4), as libpq reported it at connect.
  int server_major_version() const;

  // Counts into `meter` the rows and bytes this session streams out into
  // a copy (PgCopyStream), until attached to none (nullptr): a job's
  // progress, read by other threads. Not owned; must outlive the attachment.
  void attach_meter(RunMeter* meter) { meter_ = meter; }

  // Marks the session as not to be reused (a lock it may still hold, a
  // state nobody can vouch for): a pool closes it instead of keeping it.
  void poison() { poisoned_ = true; }
  // Open, outside any transaction, and not poisoned: fit for another run.
  bool reusable() const;
  // Inside a transaction block that has not failed, no statement running.
  bool in_transaction() const;
  const std::string& label() const { return label_; }
  // The database this session serves, as libpq reached it: the connection
  // name, host, port, database and user, one per line.
  std::string endpoint() const;

 private:
  // COPY read row by row, or streamed into another session, on this
  // connection's libpq handle.
  friend class PgCopyReader;
  friend class PgCopyStream;
  // Reads this session's answer ahead while another is waited on.
  friend class ReadTogether;

  // What an error calls a statement: its first line that says something
  // (many statements' text opens with a line break), cut at 80 bytes.
  static std::string first_line(const std::string& sql);
  // Bound values as libpq takes them: pointers into `params` (which must
  // outlive the call), a null pointer for NULL.
  static std::vector<const char*> param_values(const PgParams& params);

  [[noreturn]] void fail(const std::string& what, const pg_result* result = nullptr);
  // Reads results until libpq has none left; the first error among them,
  // after `context`, of the kind its SQLSTATE says.
  std::optional<PgError> drain_results(const std::string& context = {});
  // Waits until libpq holds the next result without blocking, asking the
  // server to cancel the statement once `cancel` (when given) is; true
  // when it was.
  bool await_result(const CancelToken* cancel);
  // Blocks until the socket has something to read (or, with `writing`,
  // takes more to send) or `timeout` passes, reading meanwhile the
  // sessions read together with this one.
  void wait_readable(std::chrono::milliseconds timeout, bool writing = false);
  // Takes in what has arrived, without blocking: into the COPY reader
  // under way, else into libpq's buffer. Throws PgError when the reader
  // cannot keep it.
  void read_arrived();
  static constexpr std::chrono::milliseconds kLongestReadAhead{20};
  // After a PQsend* (whether it was `sent`): its results as PQexec returns
  // them (the last, or the first that failed, or a COPY's start), awaited
  // while the sessions read together with this one are read. Throws
  // PgError when it was not sent.
  pg_result* awaited_results(bool sent, const std::string& sql);
  // A statement is under way: the server may be sending its answer.
  bool answering() const;
  int socket() const;
  // Asks the server to cancel the statement in progress; best effort.
  void request_cancel();
  // Stops a COPY TO STDOUT midway: cancels the query and discards the rest.
  void abandon_copy_out();
  PgResult check(pg_result* result, const std::string& sql);

  pg_conn* conn_ = nullptr;
  std::string label_;
  std::string sent_;  // the statement send() sent and finish() has not collected
  bool poisoned_ = false;
  bool needs_reset_ = false;
  RunMeter* meter_ = nullptr;
  ReadTogether* together_ = nullptr;  // the group this session is read with, if any
  PgCopyReader* reader_ = nullptr;    // the COPY out being read, if any
  std::chrono::steady_clock::time_point last_read_{};  // by its group's reckoning
  // The server process runs this session itself (no pooler between):
  // statements prepared on it stay there.
  bool direct_ = false;
  // kPinnedSessionSettings and the server's keepalives, in one string.
  std::string session_settings_;
  std::string own_time_zone_;  // as the server reported it at connect: the database's, the role's or the DSN's
  std::unordered_map<std::string, std::string> prepared_;  // statement text -> its name on this session
};

}  // namespace tidemark
