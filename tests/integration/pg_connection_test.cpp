// PgConnection when its server session is killed (pg_terminate_backend):
// every later statement fails, loudly and as a transient error, and no new
// session is opened behind the caller's back, so a session advisory lock
// or an open transaction can never be lost without an error. And the
// other way round: the server's end of every session is told to probe a
// client that vanished, so that its locks do not outlive it for hours.
#include <doctest/doctest.h>

#include <string>

#include "core/run/cancel_token.h"
#include "daemon/pg/libpq/pg_connection.h"
#include "daemon/pg/libpq/pg_copy_stream.h"
#include "pg_test_env.h"

namespace tidemark {
namespace {

using testing::PgTestEnv;

constexpr const char* kApplication = "tidemark_killed_session_test";
constexpr const char* kLockKey = "7231";

// Terminates the session and waits until its process is gone.
void kill_session(PgConnection& admin, int pid) {
  REQUIRE(admin.exec("select pg_terminate_backend($1::int, 10000)", {std::to_string(pid)}).boolean(0, 0));
}

// The error `statement` throws on `connection`.
PgError failure_of(PgConnection& connection, const std::string& statement) {
  try {
    connection.exec(statement);
  } catch (const PgError& e) {
    return e;
  }
  FAIL("\"" << statement << "\" succeeded");
  return PgError(ErrorKind::Transient, "");
}

std::string count(PgConnection& on, const std::string& sql) { return PgTestEnv::rows(on, sql)[0]; }

std::string sessions_of_this_test(PgConnection& admin) {
  return count(admin, std::string("select count(*) from pg_stat_activity where application_name = '") +
                          kApplication + "'");
}

}  // namespace

TEST_CASE("a killed session fails every later statement and is never reopened: its advisory lock is not lost silently") {
  PgTestEnv env;
  PgConnection doomed(env.dsn("source") + " application_name=" + kApplication, "doomed");
  doomed.exec(std::string("select pg_advisory_lock(") + kLockKey + ")");
  REQUIRE(doomed.reusable());
  REQUIRE(sessions_of_this_test(env.target()) == "1");

  kill_session(env.target(), doomed.backend_pid());

  // The statement PgStateStore uses to check that it still holds its lock:
  // it must fail, not answer from a fresh session that holds nothing.
  const std::string holds_lock =
      std::string("select exists (select 1 from pg_locks where locktype = 'advisory' and objid = ") + kLockKey +
      " and pid = pg_backend_pid() and granted)";
  for (int attempt = 1; attempt <= 3; ++attempt) {
    CAPTURE(attempt);
    const PgError e = failure_of(doomed, holds_lock);
    CHECK(std::string(e.what()).rfind("doomed: ", 0) == 0);  // names the connection, never its DSN
    // libpq's "server closed the connection", or the server's own goodbye.
    CHECK((e.sqlstate().empty() || e.sqlstate() == "57P01"));
    CHECK(e.as_error().kind == ErrorKind::Transient);
  }
  // Regression: a statement whose text opens with a line break was named
  // by that empty line ("doomed: : server closed the connection").
  CHECK(std::string(failure_of(doomed, "\n  select 1 as opening_line\n").what())
            .rfind("doomed: select 1 as opening_line: ", 0) == 0);
  CHECK_FALSE(doomed.is_ok());
  CHECK_FALSE(doomed.reusable());
  doomed.rollback_quietly();  // on a dead session: does nothing, throws nothing
  // No session was opened again, and nobody holds the lock.
  CHECK(sessions_of_this_test(env.target()) == "0");
  CHECK(count(env.target(), std::string("select count(*) from pg_locks where locktype = 'advisory' and objid = ") +
                                kLockKey) == "0");
}

TEST_CASE("regression: an error names a long statement by its first line cut at a character, valid UTF-8") {
  PgTestEnv env;
  // 76 bytes of ASCII, then two-byte characters: byte 77 is the middle of one.
  std::string name = "select * from " + std::string(62, 'x');
  for (int i = 0; i < 10; ++i) name += "\xC3\xA9";  // é
  const std::string what = failure_of(env.target(), name).what();
  // The cut keeps whole characters only, and the run row and the log can take it.
  const auto valid_utf8 = [](const std::string& text) {
    for (std::size_t i = 0; i < text.size();) {
      const auto c = static_cast<unsigned char>(text[i]);
      const std::size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
      if (n == 0 || i + n > text.size()) return false;
      for (std::size_t k = 1; k < n; ++k) {
        if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) return false;
      }
      i += n;
    }
    return true;
  };
  CHECK(valid_utf8(what));
  CHECK(what.find(std::string(62, 'x') + "...") != std::string::npos);  // the é it would have split is left out
}

TEST_CASE("a server's error carries the kind of its SQLSTATE") {
  PgTestEnv env;
  env.target().exec("create table public.parents (k int primary key);"
                    " create table public.children (k int primary key, parent int references public.parents (k));"
                    " insert into public.parents values (1)");
  struct Row {
    const char* statement;
    const char* sqlstate;
    ErrorKind kind;
  };
  const Row rows[] = {
      {"select 1 / 0", "22012", ErrorKind::Permanent},
      {"select * from public.no_such_table", "42P01", ErrorKind::Permanent},
      {"selec 1", "42601", ErrorKind::Permanent},
      {"insert into public.parents values (1)", "23505", ErrorKind::Permanent},
      {"insert into public.children values (1, 2)", "23503", ErrorKind::Transient},
      {"set statement_timeout = 10; select pg_sleep(5)", "57014", ErrorKind::Transient},
  };
  for (const Row& row : rows) {
    CAPTURE(row.statement);
    PgConnection session(env.dsn("target"), "kinds");  // a row's settings stay on its own session
    const PgError e = failure_of(session, row.statement);
    CHECK(e.sqlstate() == row.sqlstate);
    CHECK(e.kind() == row.kind);
    CHECK(e.as_error().kind == row.kind);
  }
  // A lock another session holds, waited for no longer than lock_timeout.
  env.target().exec("begin; lock table public.parents");
  PgConnection waiting(env.dsn("target"), "waiting");
  const PgError e = failure_of(waiting, "set lock_timeout = 10; lock table public.parents");
  CHECK(e.sqlstate() == "55P03");
  CHECK(e.kind() == ErrorKind::Transient);
  env.target().exec("rollback");
}

TEST_CASE("a transaction whose session is killed cannot go on or commit") {
  PgTestEnv env;
  env.source().exec("create table public.items (n int)");
  PgConnection doomed(env.dsn("source") + " application_name=" + kApplication, "doomed");
  doomed.exec("BEGIN");
  doomed.exec("insert into public.items values (1)");

  kill_session(env.target(), doomed.backend_pid());

  failure_of(doomed, "insert into public.items values (2)");
  failure_of(doomed, "COMMIT");
  doomed.rollback_quietly();
  CHECK(count(env.source(), "select count(*) from public.items") == "0");
  CHECK(sessions_of_this_test(env.target()) == "0");
}

TEST_CASE("a COPY whose source session is killed midway fails, and the target's transaction keeps nothing") {
  PgTestEnv env;
  env.target().exec("create table public.items (n int, filler text)");
  PgConnection source(env.dsn("source") + " application_name=" + kApplication, "source");
  const int source_pid = source.backend_pid();
  CancelToken cancel;
  env.target().exec("BEGIN");
  bool started = false;
  try {
    // About 100 MB, generated as it is sent: the session is killed long
    // before its last row could be on the way.
    PgCopyStream(source, env.target(), cancel)
        .copy("COPY (SELECT g, repeat('x', 100) FROM generate_series(1, 1000000) g) TO STDOUT", [&] {
          started = true;
          PgConnection admin(env.dsn("target"), "admin");
          kill_session(admin, source_pid);
          return std::string("COPY public.items FROM STDIN");
        });
    FAIL("the COPY succeeded although its source session was killed");
  } catch (const PgError& e) {
    CHECK(std::string(e.what()).rfind("source: ", 0) == 0);
    CHECK(e.as_error().kind == ErrorKind::Transient);
  }
  CHECK(started);
  env.target().rollback_quietly();
  CHECK(env.target().reusable());  // the target's own session is untouched
  CHECK(count(env.target(), "select count(*) from public.items") == "0");
  CHECK_FALSE(source.is_ok());
  failure_of(source, "select 1");
  CHECK(sessions_of_this_test(env.target()) == "0");
}

namespace {

// Where each keepalive setting of the server's end of `session` came from.
std::vector<std::string> keepalive_sources(PgConnection& session) {
  return PgTestEnv::rows(session,
                         "select name || '=' || source from pg_settings where name like 'tcp_keepalives_%' "
                         "or name in ('tcp_user_timeout', 'client_connection_check_interval') order by name");
}

// Each setting, as `source` set it (client_connection_check_interval from 14 on).
std::vector<std::string> all_from(const PgConnection& session, const std::string& source) {
  std::vector<std::string> out;
  if (session.server_major_version() >= 14) out.push_back("client_connection_check_interval=" + source);
  for (const char* name : {"tcp_keepalives_count", "tcp_keepalives_idle", "tcp_keepalives_interval", "tcp_user_timeout"}) {
    out.push_back(std::string(name) + "=" + source);
  }
  return out;
}

TEST_CASE("every session tells the server to probe it as it probes the server, and again after a reset") {
  // The test's server listens on a Unix socket, where the server reads
  // these settings as 0: where they came from is what can be seen here
  // (the faults suite, tests/integration/faults/, sees them work over TCP).
  PgConnection session(testing::test_dsn("postgres"), "keepalives", KeepaliveTimes::for_lease(std::chrono::seconds(9)));
  CHECK(keepalive_sources(session) == all_from(session, "session"));
  session.reset();
  CHECK(keepalive_sources(session) == all_from(session, "session"));

  // A DSN that turns keepalives off leaves the server's as they were.
  PgConnection off(testing::test_dsn("postgres") + " keepalives=0", "no keepalives");
  CHECK(keepalive_sources(off) == all_from(off, "default"));
}

}  // namespace
}  // namespace tidemark
