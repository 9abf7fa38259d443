// An error of a PostgreSQL statement or connection, thrown inside
// daemon/pg and turned into a value (`as_error`) at its edge: the one place
// a SQLSTATE becomes transient or permanent, and the text tidemark shows
// and stores of an error libpq holds. Value type; thread-safe.
#pragma once

#include <stdexcept>
#include <string>

#include "core/result.h"

// libpq's handles (PGconn, PGresult), declared as libpq-fe.h names them.
struct pg_conn;
struct pg_result;

namespace tidemark {

class PgError : public std::runtime_error {
 public:
  PgError(const std::string& message, std::string sqlstate = {}, int position = 0)
      : std::runtime_error(message), sqlstate_(std::move(sqlstate)), position_(position) {}
  // A failure tidemark found in what a statement returned (a row outside
  // its partition, a column the query lacks): the query is wrong, and no
  // retry can fix it, whatever the SQLSTATE.
  static PgError in_query(const std::string& message, std::string sqlstate = {}, int position = 0) {
    PgError e(message, std::move(sqlstate), position);
    e.in_query_ = true;
    return e;
  }
  const std::string& sqlstate() const { return sqlstate_; }
  // Where in the statement the server found the error: a 1-based count of
  // characters, 0 when it did not say.
  int position() const { return position_; }
  // The failure as a value, typed by its SQLSTATE: connection loss,
  // timeouts, cancellation, serialization failures, lock waits and
  // resource shortages are transient, and so is a foreign key violation
  // (the parent's table may load later); errors in a statement or its data
  // (syntax, missing table or column, privileges, type or other constraint
  // violations) and a missing database or role are permanent. Errors
  // without a SQLSTATE come from the client library (a connection that
  // could not be made or broke) and are transient; one made by in_query
  // is permanent.
  Error as_error() const;

  // The error a failed statement (`result`, may be null) or, without a
  // server message, the connection left, after `context`: its SQLSTATE,
  // position and text (server_error_text, else connection_error_text).
  static PgError from_libpq(const std::string& context, const pg_result* result, const pg_conn* conn);

 private:
  std::string sqlstate_;
  int position_ = 0;
  bool in_query_ = false;
};

// What tidemark shows and stores of a server error: severity, message and
// hint, on one line. PostgreSQL's DETAIL and CONTEXT are left out: they
// carry row values ("Key (k)=(1) already exists", "Failing row contains
// (...)"), which must not reach logs or tidemark.runs; the message names
// the constraint or column, which is what an operator acts on.
std::string server_error_text(const pg_result* result);
// The same for libpq's connection-level message: its lines joined by "; ",
// without the DETAIL and CONTEXT lines a failed query leaves in it.
std::string connection_error_text(const pg_conn* conn);

}  // namespace tidemark
