#include "daemon/pg/libpq/pg_copy_reader.h"

#include <libpq-fe.h>

#include <chrono>
#include <cstdlib>
#include <system_error>

#include "daemon/pg/libpq/pg_connection.h"
#include "daemon/pg/libpq/pg_result.h"
#include "daemon/pg/libpq/read_together.h"

namespace tidemark {
namespace {

// Messages handed out between looks at the sessions read together with
// this one: a look costs a clock read. Every caller takes far less than
// a second for this many, or waits among them (which reads the others).
constexpr std::size_t kTendEvery = 64;

}  // namespace

PgCopyReader::PgCopyReader(PgConnection& connection, std::string copy_out, const std::string& before,
                           std::vector<PgResult>* before_rows)
    : connection_(connection),
      copy_out_(std::move(copy_out)),
      before_rows_(before_rows),
      queue_(kMemoryBound, spill_directory()) {
  // A statement sent is finished first; one COPY at a time.
  if (!connection_.sent_.empty() || connection_.reader_ != nullptr) std::abort();
  const std::string sent = before.empty() ? copy_out_ : before + "; " + copy_out_;
  if (!PQsendQuery(connection_.conn_, sent.c_str())) connection_.fail(PgConnection::first_line(copy_out_));
  connection_.reader_ = this;
}

PgCopyReader::~PgCopyReader() {
  release();
  if (refused_ != nullptr) PQclear(refused_);
  if (ended_) return;
  connection_.reader_ = nullptr;
  connection_.abandon_copy_out();
}

void PgCopyReader::release() {
  if (data_ != nullptr) PQfreemem(data_);
  data_ = nullptr;
}

void PgCopyReader::end() {
  ended_ = true;
  connection_.reader_ = nullptr;
}

void PgCopyReader::fail(PGresult* result) {
  end();
  const PgError error =
      PgError::from_libpq(connection_.label_ + ": " + PgConnection::first_line(copy_out_), result, connection_.conn_);
  PQclear(result);
  connection_.drain_results();
  connection_.needs_reset_ = true;
  throw error;
}

void PgCopyReader::fail_with(const std::string& what) {
  // A broken connection has no COPY left to stop; a healthy one still
  // copies, and the destructor stops it.
  if (broken_) end();
  connection_.needs_reset_ = true;
  throw PgError(ErrorKind::Transient, connection_.label_ + ": " + what);
}

bool PgCopyReader::take_arrived() {
  if (ended_ || copy_done_ || broken_ || refused_ != nullptr || !spill_failure_.empty()) return false;
  pg_conn* conn = connection_.conn_;
  if (!PQconsumeInput(conn)) {
    broken_ = true;  // next() says so, in its own turn
    return false;
  }
  if (!started_ && !take_start()) return refused_ == nullptr && !broken_;
  for (;;) {
    char* data = nullptr;
    const int n = PQgetCopyData(conn, &data, 1);
    if (n == 0) return true;
    if (n < 0) {
      (n == -1 ? copy_done_ : broken_) = true;
      return false;
    }
    try {
      queue_.push(std::string_view(data, static_cast<std::size_t>(n)));
    } catch (const std::system_error& e) {
      PQfreemem(data);
      spill_failure_ = e.what();
      connection_.needs_reset_ = true;
      throw PgError(ErrorKind::Transient, connection_.label_ + ": " + spill_failure_);
    }
    PQfreemem(data);
    read_ahead_bytes_ += static_cast<std::uint64_t>(n);
  }
}

bool PgCopyReader::take_start() {
  pg_conn* conn = connection_.conn_;
  while (!started_ && refused_ == nullptr && !broken_ && !result_waits()) {
    PGresult* result = PQgetResult(conn);
    const ExecStatusType status = PQresultStatus(result);
    if (result == nullptr) {
      broken_ = true;  // the results ended before any COPY: nothing more will come
    } else if (status == PGRES_COPY_OUT) {
      PQclear(result);
      started_ = true;
    } else if (status == PGRES_TUPLES_OK && before_rows_ != nullptr) {
      before_rows_->emplace_back(result);
    } else if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) {
      PQclear(result);
    } else {
      refused_ = result;  // nothing after a failed statement runs; next() fails with it
    }
  }
  return started_;
}

void PgCopyReader::wait() {
  connection_.wait_readable(std::chrono::milliseconds(100));
  // An asynchronous read of a broken connection finds nothing, again and
  // again: only taking input says it broke.
  if (!PQconsumeInput(connection_.conn_)) broken_ = true;
}

bool PgCopyReader::result_waits() {
  // A broken connection's result is its error, and PQgetResult has it.
  return !broken_ && PQconsumeInput(connection_.conn_) && PQisBusy(connection_.conn_);
}

void PgCopyReader::tend() {
  if (++since_tended_ < kTendEvery || connection_.together_ == nullptr) return;
  since_tended_ = 0;
  connection_.together_->tend();
}

std::optional<std::string_view> PgCopyReader::next() {
  release();
  if (!queue_.empty()) {
    tend();
    try {
      return queue_.pop();
    } catch (const std::system_error& e) {
      fail_with(e.what());
    }
  }
  pg_conn* conn = connection_.conn_;
  for (;;) {
    if (ended_) return std::nullopt;
    if (!spill_failure_.empty()) fail_with(spill_failure_);
    if (refused_ != nullptr) {
      PGresult* refused = refused_;
      refused_ = nullptr;
      fail(refused);
    }
    if (!started_) {
      if (!take_start() && refused_ == nullptr && !broken_) wait();
      if (!started_ && broken_) fail_with("no COPY under way: " + connection_error_text(conn));
      continue;
    }
    if (broken_) fail_with("reading COPY data: " + connection_error_text(conn));
    if (!copy_done_) {
      const int n = PQgetCopyData(conn, &data_, 1);
      if (n > 0) {
        tend();
        return std::string_view(data_, static_cast<std::size_t>(n));
      }
      if (n == 0) {
        wait();
        continue;
      }
      (n == -1 ? copy_done_ : broken_) = true;
      continue;
    }
    // The COPY's own result: an error the server hit midway comes here.
    if (result_waits()) {
      wait();
      continue;
    }
    PGresult* finished = PQgetResult(conn);
    if (PQresultStatus(finished) != PGRES_COMMAND_OK) fail(finished);
    end();
    PQclear(finished);
    connection_.drain_results();
    return std::nullopt;
  }
}

}  // namespace tidemark
