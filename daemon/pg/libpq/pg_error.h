// An error of a PostgreSQL statement or connection, thrown inside
// daemon/pg and turned into a value at its edge (as_result). Every one
// carries its kind, decided where it is made: from the SQLSTATE when libpq
// reports it (from_libpq), by tidemark for the errors it finds itself.
// Also the text tidemark shows and stores of an error libpq holds. Value
// type; thread-safe.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/result.h"

// libpq's handles (PGconn, PGresult), declared as libpq-fe.h names them.
struct pg_conn;
struct pg_result;

namespace tidemark {

class PgError : public std::runtime_error {
 public:
  // An error tidemark finds itself (a cancel, a stream it cannot read, a
  // row outside its partition), of the kind its maker decides.
  PgError(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}

  // The error a failed statement (`result`, may be null) or, without a
  // server message, the connection left, after `context`: its SQLSTATE,
  // position and text (server_error_text, else connection_error_text).
  // Its kind is the SQLSTATE's (sqlstate_kind); without one the message is
  // libpq's own (a connection that broke or could not be used), which is
  // transient.
  static PgError from_libpq(const std::string& context, const pg_result* result, const pg_conn* conn);

  ErrorKind kind() const { return kind_; }
  // Empty for an error that did not come from the server.
  const std::string& sqlstate() const { return sqlstate_; }
  // Where in the statement the server found the error: a 1-based count of
  // characters, 0 when it did not say.
  int position() const { return position_; }
  // The failure as a value, of its kind.
  Error as_error() const { return Error{what(), kind_}; }
  // The same error without its position: for one whose position is in a
  // statement its reader never sees (a target's COPY, where the reader
  // reads positions as places in the source's query).
  PgError without_position() const {
    PgError out = *this;
    out.position_ = 0;
    return out;
  }

 private:
  ErrorKind kind_;
  std::string sqlstate_;
  int position_ = 0;
};

// The kind of a server error by its SQLSTATE (five characters): connection
// loss, timeouts, cancellation, serialization failures, lock waits and
// resource shortages are transient, and so is a foreign key violation (the
// parent's table may load later); errors in a statement or its data
// (syntax, missing table or column, privileges, type or other constraint
// violations) and a missing database or role are permanent.
ErrorKind sqlstate_kind(std::string_view sqlstate);

// The Result an attempt returning T is handed back as: T itself when it is
// one, Status when the attempt returns nothing.
template <class T>
struct AttemptResult {
  using type = Result<T>;
};
template <class T>
struct AttemptResult<Result<T>> {
  using type = Result<T>;
};
template <>
struct AttemptResult<void> {
  using type = Status;
};

// Runs `attempt` and hands back what it returns, or the PgError it throws
// as that error's value: how daemon/pg's exceptions become the values
// core takes (three places that also catch other exceptions convert with
// as_error themselves). Any other exception passes through.
template <class Attempt>
typename AttemptResult<std::invoke_result_t<Attempt&>>::type as_result(Attempt&& attempt) {
  try {
    if constexpr (std::is_void_v<std::invoke_result_t<Attempt&>>) {
      attempt();
      return ok_status();
    } else {
      return attempt();
    }
  } catch (const PgError& e) {
    return e.as_error();
  }
}

// What tidemark shows and stores of a server error: severity, message and
// hint, on one line. PostgreSQL's DETAIL and CONTEXT are left out: they
// carry row values ("Key (k)=(1) already exists", "Failing row contains
// (...)"), which must not reach logs or tidemark.runs; the message names
// the constraint or column, which is what an operator acts on.
std::string server_error_text(const pg_result* result);
// A libpq message (may be null) without its trailing newlines and blanks.
std::string trimmed_message(const char* message);
// The same for libpq's connection-level message: its lines joined by "; ",
// without the DETAIL and CONTEXT lines a failed query leaves in it.
std::string connection_error_text(const pg_conn* conn);

}  // namespace tidemark
