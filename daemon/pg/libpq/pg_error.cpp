#include "daemon/pg/libpq/pg_error.h"

#include <libpq-fe.h>

#include <cstdlib>

namespace tidemark {

std::string trimmed_message(const char* message) {
  std::string out = message ? message : "";
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

namespace {

int error_position(const PGresult* result) {
  const char* position = result ? PQresultErrorField(result, PG_DIAG_STATEMENT_POSITION) : nullptr;
  return position ? std::atoi(position) : 0;
}

std::string error_sqlstate(const PGresult* result) {
  const char* state = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  return state ? state : "";
}

// A libpq message's lines (client-side ones span several: "server closed
// the connection unexpectedly\n\tThis probably means...") joined by "; ",
// without DETAIL and CONTEXT lines.
std::string joined_lines(const std::string& message) {
  std::string out;
  std::size_t start = 0;
  while (start <= message.size()) {
    std::size_t end = message.find('\n', start);
    if (end == std::string::npos) end = message.size();
    std::string line = message.substr(start, end - start);
    line.erase(0, line.find_first_not_of(" \t"));
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    const bool withheld = line.rfind("DETAIL:", 0) == 0 || line.rfind("CONTEXT:", 0) == 0;
    if (!line.empty() && !withheld) out += (out.empty() ? "" : "; ") + line;
    start = end + 1;
  }
  return out;
}

}  // namespace

ErrorKind sqlstate_kind(std::string_view sqlstate) {
  // SQLSTATE classes (PostgreSQL Appendix A) that no retry can fix.
  static constexpr std::string_view kPermanentClasses[] = {
      "0A",  // feature not supported
      "21",  // cardinality violation: a source that repeats a key (a view's)
      "22",  // data exception
      "23",  // integrity constraint violation
      "28",  // invalid authorization specification
      "2B",  // dependent privilege descriptors still exist
      "3D",  // invalid catalog name (no such database)
      "3F",  // invalid schema name
      "42",  // syntax error or access rule violation
      "44",  // WITH CHECK OPTION violation
  };
  // A row whose parent the target does not hold yet: the parent's own
  // table may load at its next run, and this one with it.
  if (sqlstate == "23503") return ErrorKind::Transient;
  for (const std::string_view c : kPermanentClasses) {
    if (sqlstate.substr(0, 2) == c) return ErrorKind::Permanent;
  }
  return ErrorKind::Transient;
}

PgError PgError::from_libpq(const std::string& context, const pg_result* result, const pg_conn* conn) {
  std::string message;
  if (result) message = server_error_text(result);
  if (message.empty()) message = connection_error_text(conn);
  const std::string state = error_sqlstate(result);
  // Without a SQLSTATE the message is libpq's own: the connection broke,
  // or a statement could not be sent on it.
  PgError out(state.empty() ? ErrorKind::Transient : sqlstate_kind(state), context + ": " + message);
  out.sqlstate_ = state;
  out.position_ = error_position(result);
  return out;
}

std::string server_error_text(const PGresult* result) {
  const char* primary = result ? PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY) : nullptr;
  if (primary == nullptr) return joined_lines(trimmed_message(result ? PQresultErrorMessage(result) : nullptr));
  const char* severity = PQresultErrorField(result, PG_DIAG_SEVERITY);
  const char* hint = PQresultErrorField(result, PG_DIAG_MESSAGE_HINT);
  std::string out = std::string(severity ? severity : "ERROR") + ":  " + primary;
  if (hint) out += std::string(" HINT:  ") + hint;
  for (char& c : out) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return trimmed_message(out.c_str());
}

std::string connection_error_text(const PGconn* conn) { return joined_lines(trimmed_message(PQerrorMessage(conn))); }

}  // namespace tidemark
