#include "daemon/pg/libpq/pg_copy_reader.h"

#include <libpq-fe.h>

#include "daemon/pg/libpq/pg_connection.h"

namespace tidemark {

PgCopyReader::PgCopyReader(PgConnection& connection, std::string copy_out)
    : connection_(connection), copy_out_(std::move(copy_out)) {
  if (!connection_.sent_.empty()) std::abort();  // a statement sent is finished first
  if (!PQsendQuery(connection_.conn_, copy_out_.c_str())) connection_.fail(copy_out_.substr(0, 80));
}

PgCopyReader::~PgCopyReader() {
  release();
  if (!ended_) connection_.abandon_copy_out();
}

void PgCopyReader::release() {
  if (data_ != nullptr) PQfreemem(data_);
  data_ = nullptr;
}

void PgCopyReader::fail(PGresult* result) {
  ended_ = true;
  const PgError error =
      PgError::from_libpq(connection_.label_ + ": " + copy_out_.substr(0, 80), result, connection_.conn_);
  PQclear(result);
  connection_.drain_results();
  connection_.needs_reset_ = true;
  throw error;
}

std::optional<std::string_view> PgCopyReader::next() {
  release();
  if (ended_) return std::nullopt;
  pg_conn* conn = connection_.conn_;
  if (!started_) {
    PGresult* started = PQgetResult(conn);
    if (PQresultStatus(started) != PGRES_COPY_OUT) fail(started);
    PQclear(started);
    started_ = true;
  }
  const int n = PQgetCopyData(conn, &data_, 0);
  if (n > 0) return std::string_view(data_, static_cast<std::size_t>(n));
  ended_ = true;
  if (n == -2) {
    connection_.needs_reset_ = true;
    throw PgError(ErrorKind::Transient, connection_.label_ + ": reading COPY data: " + connection_error_text(conn));
  }
  // The COPY's own result: an error the server hit midway comes here.
  PGresult* finished = PQgetResult(conn);
  if (PQresultStatus(finished) != PGRES_COMMAND_OK) fail(finished);
  PQclear(finished);
  connection_.drain_results();
  return std::nullopt;
}

}  // namespace tidemark
