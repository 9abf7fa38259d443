// Each way a PgError is made carries its kind: from the SQLSTATE when
// libpq reports one, transient for libpq's own connection errors, and the
// kind its maker says for the errors tidemark finds itself; and as_result,
// where a thrown one becomes a value. No server: the server's own errors
// are in tests/integration/pg_connection_test.cpp.
#include "daemon/pg/libpq/pg_error.h"

#include <libpq-fe.h>

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "daemon/pg/libpq/pg_connection.h"

namespace tidemark {
namespace {

// A socket directory that does not exist: libpq fails at once, no network.
constexpr const char* kNoServer = "host=/nonexistent/tidemark-no-server port=1 connect_timeout=1";

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

}  // namespace

TEST_CASE("a SQLSTATE's kind: what a retry can pass is transient, the statement, its data and its rights permanent") {
  struct Row {
    const char* sqlstate;
    const char* meaning;
    ErrorKind kind;
  };
  const Row rows[] = {
      {"08006", "connection failure", ErrorKind::Transient},
      {"57014", "query canceled (statement_timeout)", ErrorKind::Transient},
      {"57P01", "admin shutdown (pg_terminate_backend)", ErrorKind::Transient},
      {"40001", "serialization failure", ErrorKind::Transient},
      {"40P01", "deadlock detected", ErrorKind::Transient},
      {"55P03", "lock not available (lock_timeout)", ErrorKind::Transient},
      {"53100", "disk full", ErrorKind::Transient},
      {"53300", "too many connections", ErrorKind::Transient},
      {"XX000", "internal error", ErrorKind::Transient},
      {"23503", "foreign key violation: the parent's table may load later", ErrorKind::Transient},
      {"23505", "unique violation", ErrorKind::Permanent},
      {"23502", "not null violation", ErrorKind::Permanent},
      {"23514", "check violation", ErrorKind::Permanent},
      {"22012", "division by zero", ErrorKind::Permanent},
      {"22P02", "invalid text representation", ErrorKind::Permanent},
      {"0A000", "feature not supported", ErrorKind::Permanent},
      {"21000", "cardinality violation", ErrorKind::Permanent},
      {"28P01", "invalid password", ErrorKind::Permanent},
      {"2BP01", "dependent objects still exist", ErrorKind::Permanent},
      {"3D000", "invalid catalog name (no such database)", ErrorKind::Permanent},
      {"3F000", "invalid schema name", ErrorKind::Permanent},
      {"42601", "syntax error", ErrorKind::Permanent},
      {"42P01", "undefined table", ErrorKind::Permanent},
      {"42703", "undefined column", ErrorKind::Permanent},
      {"42501", "insufficient privilege", ErrorKind::Permanent},
      {"44000", "WITH CHECK OPTION violation", ErrorKind::Permanent},
  };
  for (const Row& row : rows) {
    CAPTURE(row.sqlstate);
    CAPTURE(row.meaning);
    CHECK(sqlstate_kind(row.sqlstate) == row.kind);
  }
}

TEST_CASE("an error tidemark makes itself carries the kind its maker gives it, and no SQLSTATE") {
  for (const ErrorKind kind : {ErrorKind::Transient, ErrorKind::Permanent}) {
    CAPTURE(error_kind_name(kind));
    const PgError e(kind, "source: the row-hash COPY sent a NULL hash");
    CHECK(e.kind() == kind);
    CHECK(e.sqlstate().empty());
    CHECK(e.position() == 0);
    const Error value = e.as_error();
    CHECK(value.kind == kind);
    CHECK(value.message == "source: the row-hash COPY sent a NULL hash");
  }
}

TEST_CASE("an error libpq reports without a SQLSTATE is its own, a connection that failed: transient") {
  PGconn* conn = PQconnectdb(kNoServer);
  REQUIRE(conn != nullptr);
  REQUIRE(PQstatus(conn) == CONNECTION_BAD);

  // No result: the connection's message.
  const PgError lost = PgError::from_libpq("state: select 1", nullptr, conn);
  CHECK(lost.kind() == ErrorKind::Transient);
  CHECK(lost.sqlstate().empty());
  CHECK(starts_with(lost.what(), "state: select 1: "));
  CHECK(std::string(lost.what()).size() > std::string("state: select 1: ").size());

  // A result libpq made itself, which holds its message and no SQLSTATE.
  PGresult* result = PQmakeEmptyPGresult(conn, PGRES_FATAL_ERROR);
  REQUIRE(result != nullptr);
  const PgError failed = PgError::from_libpq("state: select 1", result, conn);
  CHECK(failed.kind() == ErrorKind::Transient);
  CHECK(failed.sqlstate().empty());
  CHECK(failed.as_error().kind == ErrorKind::Transient);
  PQclear(result);
  PQfinish(conn);
}

TEST_CASE("a connection that cannot be made is a transient error that names the connection, not its DSN") {
  try {
    PgConnection connection(std::string(kNoServer) + " password=secret", "nowhere");
    FAIL("a connection to no server was made");
  } catch (const PgError& e) {
    CHECK(e.kind() == ErrorKind::Transient);
    CHECK(starts_with(e.what(), "cannot connect to nowhere: "));
    CHECK(std::string(e.what()).find("secret") == std::string::npos);
  }
}

TEST_CASE("as_result hands back what an attempt returns, as a Result of it") {
  const Result<int> plain = as_result([] { return 7; });
  REQUIRE(plain.ok());
  CHECK(*plain == 7);

  const Result<std::vector<int>> result =
      as_result([]() -> Result<std::vector<int>> { return std::vector<int>{1, 2}; });
  REQUIRE(result.ok());
  CHECK(result->size() == 2);

  // An error the attempt returns as a value passes as it is.
  const Result<int> refused = as_result([]() -> Result<int> { return permanent_error("no key column k"); });
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error() == "no key column k");
  CHECK(refused.error_kind() == ErrorKind::Permanent);

  int ran = 0;
  const Status done = as_result([&] { ++ran; });
  CHECK(done.ok());
  CHECK(ran == 1);
}

TEST_CASE("as_result hands back a thrown PgError as its value, of its kind; other exceptions pass through") {
  for (const ErrorKind kind : {ErrorKind::Transient, ErrorKind::Permanent}) {
    CAPTURE(error_kind_name(kind));
    const Result<int> failed = as_result([&]() -> int { throw PgError(kind, "state: select 1: gone"); });
    REQUIRE_FALSE(failed.ok());
    CHECK(failed.error() == "state: select 1: gone");
    CHECK(failed.error_kind() == kind);

    const Status not_done = as_result([&] { throw PgError(kind, "target: COMMIT: gone"); });
    REQUIRE_FALSE(not_done.ok());
    CHECK(not_done.error() == "target: COMMIT: gone");
    CHECK(not_done.error_kind() == kind);
  }
  CHECK_THROWS_AS(as_result([] { throw std::invalid_argument("stoll"); }), std::invalid_argument);
}

}  // namespace tidemark
