#include "daemon/pg/libpq/pg_copy_stream.h"

#include <libpq-fe.h>

#include <chrono>
#include <cstring>
#include <optional>

#include "core/run/cancel_token.h"
#include "core/run/run_meter.h"
#include "core/text/sql_identifier.h"
#include "daemon/pg/libpq/pg_copy_reader.h"
#include "daemon/pg/libpq/read_together.h"

namespace tidemark {
namespace {

// A copy's rows and bytes, told to the source session's meter now and
// then (every kMeterEvery rows, and at the end): a job's progress costs the
// copy a counter, not an atomic operation a row.
class Metered {
 public:
  explicit Metered(RunMeter* meter) : meter_(meter) {}
  ~Metered() { flush(); }
  Metered(const Metered&) = delete;
  Metered& operator=(const Metered&) = delete;
  void add(std::int64_t bytes) {
    bytes_ += bytes;
    if (++rows_ == kMeterEvery) flush();
  }

 private:
  static constexpr std::int64_t kMeterEvery = 4096;
  void flush() {
    if (meter_ != nullptr && rows_ > 0) meter_->add(rows_, bytes_);
    rows_ = bytes_ = 0;
  }
  RunMeter* meter_;
  std::int64_t rows_ = 0;
  std::int64_t bytes_ = 0;
};

// Rows go to the target in CopyData messages of about this size, not one
// a row: the target's backend handles a message at a time, and a million
// small ones cost it a tenth of a first load's time.
constexpr std::size_t kFlushBytes = 1 << 16;

// A binary COPY stream with no rows: the 19-byte file header (signature,
// flags, header extension length 0) and the 2-byte trailer (-1), which the
// server sends as one message when there is no row between them.
bool binary_copy_without_rows(const char* data, int n) {
  static constexpr char kSignature[] = "PGCOPY\n\377\r\n";  // 11 bytes with its NUL
  return n == 21 && std::memcmp(data, kSignature, 11) == 0 && static_cast<unsigned char>(data[19]) == 0xFF &&
         static_cast<unsigned char>(data[20]) == 0xFF;
}

// COPY text format: backslash escapes for the four characters that matter.
void append_copy_field(std::string& out, const char* value, int length) {
  for (int i = 0; i < length; ++i) {
    const char c = value[i];
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      default: out += c;
    }
  }
}

}  // namespace

PgCopyStream::PgCopyStream(PgConnection& source, PgConnection& target, const CancelToken& cancel)
    : source_(source), target_(target), cancel_(cancel) {}

std::int64_t PgCopyStream::copy(const std::string& copy_out, const std::function<std::string()>& prepare_copy_in,
                                bool binary, const std::string& before, std::vector<PgResult>* before_rows) {
  pg_conn* const to = target_.conn_;
  // The target may keep the rows waiting (a lock, a checkpoint): the
  // source's are read ahead meanwhile, so that its window never stays
  // closed for as long as the user timeout it sets (read_together.h).
  ReadTogether together{&source_, &target_};
  std::optional<PgCopyReader> reader(std::in_place, source_, copy_out, before, before_rows);
  std::optional<PgError> failure;
  bool target_refused = false;    // the failure is the target's: its server may say why
  bool target_cancelled = false;  // asked already to stop what it does
  const auto fail_transient = [&](const std::string& what) {
    failure = PgError(ErrorKind::Transient, what);
    return false;
  };
  const auto target_failed = [&](const char* doing) {
    target_refused = true;
    return fail_transient(target_.label_ + ": " + doing + ": " + connection_error_text(to));
  };
  // Hands the target what libpq holds for it, waiting as long as it takes
  // it: a cancel stops the wait.
  const auto flushed = [&] {
    for (;;) {
      const int left = PQflush(to);
      if (left == 0) return true;
      if (left < 0) return target_failed("sending COPY data");
      if (cancel_.cancelled()) {
        target_.request_cancel();  // the target may be stuck on a lock or a row: it stops
        target_cancelled = true;
        return fail_transient(cancel_.reason());
      }
      try {
        target_.wait_readable(std::chrono::milliseconds(100), /*writing=*/true);
      } catch (const PgError& e) {  // the source's rows could not be kept; the wait cancelled the target
        failure = e;
        target_cancelled = true;
        return false;
      }
      if (!PQconsumeInput(to)) return target_failed("sending COPY data");
    }
  };
  // The target is touched only once the first row arrives: a window with
  // no rows costs it nothing, not even a staging table. Its COPY is sent
  // without blocking, so that a wait for its table's lock reads the
  // source ahead too.
  std::string copy_in;
  const auto start_copy_in = [&] {
    copy_in = prepare_copy_in();
    if (!PQsendQuery(to, copy_in.c_str())) target_.fail(PgConnection::first_line(copy_in));
    const bool cancelled = target_.await_result(&cancel_);
    const PgResult started(PQgetResult(to));
    const bool copying = PQresultStatus(started.raw()) == PGRES_COPY_IN;
    if (copying && cancelled) PQputCopyEnd(to, cancel_.reason().c_str());
    if (!copying || cancelled) {
      target_.drain_results();
      if (cancelled) {
        // Said as every cancel is: the run row opens with the reason.
        target_.needs_reset_ = true;
        throw PgError(ErrorKind::Transient, cancel_.reason());
      }
      target_.fail(PgConnection::first_line(copy_in), started.raw());
    }
    if (PQsetnonblocking(to, 1) != 0) target_.fail(PgConnection::first_line(copy_in));
  };
  // Sends `size` bytes as one CopyData message.
  const auto send = [&](const char* bytes, std::size_t size) {
    if (size == 0) return true;
    for (;;) {
      const int put = PQputCopyData(to, bytes, static_cast<int>(size));
      if (put == 1) return flushed();
      if (put < 0) return target_failed("sending COPY data");
      if (!flushed()) return false;  // libpq's buffer was full: emptied, the message goes again
    }
  };

  Metered metered(source_.meter_);
  // Never more than kFlushBytes: a row that would pass it sends the rows
  // before it first, and a row as large goes on by itself, as it came.
  std::string pending;
  pending.reserve(kFlushBytes);
  const auto send_pending = [&] {
    const bool put = send(pending.data(), pending.size());
    pending.clear();
    return put;
  };
  for (;;) {
    if (cancel_.cancelled()) {
      fail_transient(cancel_.reason());
      break;
    }
    std::optional<std::string_view> row;
    try {
      row = reader->next();
    } catch (const PgError& e) {  // the source's error, of the kind its SQLSTATE says
      failure = e;
      break;
    }
    if (!row) break;
    const char* data = row->data();
    const std::size_t size = row->size();
    if (copy_in.empty() && binary && binary_copy_without_rows(data, static_cast<int>(size))) {
      continue;  // nothing between header and trailer: no row, the target stays untouched
    }
    if (copy_in.empty()) start_copy_in();
    metered.add(static_cast<std::int64_t>(size));
    bool fine = pending.size() + size <= kFlushBytes || send_pending();
    if (fine && size >= kFlushBytes) {
      fine = send(data, size);
    } else if (fine) {
      pending.append(data, size);
    }
    if (!fine) break;
  }
  if (!failure && !copy_in.empty() && send_pending()) {
    if (PQputCopyEnd(to, nullptr) != 1) {
      target_failed("ending COPY");
    } else {
      flushed();
    }
  }
  // The source has ended, or stops now: nothing is left to read ahead
  // while the target finishes.
  reader.reset();
  // A session that cannot go back to blocking mode (output it could not
  // send) is not to be used again.
  const auto blocking_again = [&] {
    if (PQsetnonblocking(to, 0) != 0) target_.poison();
  };
  if (failure) {
    if (!copy_in.empty()) {
      // A target stuck on a lock or a slow row stops, unless it failed by
      // itself.
      if (!target_refused && !target_cancelled) target_.request_cancel();
      PQputCopyEnd(to, failure->what());
      // A server that refused a row mid-stream said why (a unique
      // violation is permanent), and libpq may have taken that in.
      auto refusal = target_.drain_results(target_.label_ + ": " + PgConnection::first_line(copy_in));
      if (target_refused && refusal) failure = std::move(refusal);
      blocking_again();
    }
    target_.needs_reset_ = source_.needs_reset_ = true;
    throw *failure;
  }
  if (copy_in.empty()) return 0;  // the source had no rows: the target never saw a COPY
  blocking_again();
  // The target's last rows may still wait for a lock (a key another
  // transaction holds): a cancel stops that wait too.
  if (target_.await_result(&cancel_)) {
    target_.drain_results();
    target_.needs_reset_ = source_.needs_reset_ = true;
    throw PgError(ErrorKind::Transient, cancel_.reason());
  }
  PGresult* finished = PQgetResult(to);
  const PgResult result(finished);
  if (PQresultStatus(finished) != PGRES_COMMAND_OK) {
    target_.drain_results();
    target_.fail(PgConnection::first_line(copy_in), finished);
  }
  const std::int64_t rows = result.affected();
  target_.drain_results();
  return rows;
}

std::int64_t PgCopyStream::copy_query(const std::string& query, const PgParams& params,
                                      const std::vector<PgOid>& types, const std::string& target_table,
                                      const CopyRowCheck* check) {
  pg_conn* const from = source_.conn_;
  pg_conn* const to = target_.conn_;
  // A query's rows come one result at a time, and nothing reads them
  // ahead while the target takes them: the source's user timeout is
  // lifted for the query's transaction (one of its own when none is open).
  const bool own_transaction = PQtransactionStatus(from) == PQTRANS_IDLE;
  try {
    source_.exec(own_transaction ? "BEGIN; SET LOCAL tcp_user_timeout = 0" : "SET LOCAL tcp_user_timeout = 0");
  } catch (const PgError&) {
    if (own_transaction) source_.rollback_quietly();
    throw;
  }
  const std::vector<const char*> values = PgConnection::param_values(params);
  const bool sent = PQsendQueryParams(from, query.c_str(), static_cast<int>(values.size()), types.data(),
                                      values.data(), nullptr, nullptr, 0) == 1;
  if (!sent || !PQsetSingleRowMode(from)) {
    // The error first: a rollback clears libpq's message.
    const PgError error = PgError::from_libpq(source_.label_ + ": partition query", nullptr, from);
    if (sent) source_.request_cancel();
    if (own_transaction) source_.rollback_quietly();
    source_.needs_reset_ = true;
    throw error;
  }
  std::string buffer;
  bool copying = false;
  int copied_columns = 0;
  int checked_column = -1;  // the column check->describe is given
  // The first failure, which stops the query on the source, so that
  // draining the rest of its result does not mean reading all of it.
  std::optional<PgError> failure;
  const auto stop = [&](PgError error) {
    failure = std::move(error);
    source_.request_cancel();
  };
  std::int64_t rows = 0;
  Metered metered(source_.meter_);
  while (PGresult* raw = PQgetResult(from)) {
    const PgResult result(raw);
    const ExecStatusType status = PQresultStatus(raw);
    if (status == PGRES_TUPLES_OK) continue;  // the end of the rows
    if (status != PGRES_SINGLE_TUPLE) {
      if (!failure) failure = PgError::from_libpq(source_.label_ + ": partition query", raw, from);
      continue;
    }
    if (failure) continue;  // drain
    if (cancel_.cancelled()) {
      stop(PgError(ErrorKind::Transient, cancel_.reason()));
      continue;
    }
    if (!copying) {
      copied_columns = PQnfields(raw) - (check ? 1 : 0);
      std::string names;
      for (int c = 0; c < copied_columns; ++c) {
        const std::string name = PQfname(raw, c);
        if (check && checked_column < 0 && name == check->column) checked_column = c;
        names += (c ? ", " : "") + quote_identifier(name);
      }
      const std::string copy_in = "COPY " + target_table + " (" + names + ") FROM STDIN";
      const PgResult started(PQexec(to, copy_in.c_str()));
      if (PQresultStatus(started.raw()) != PGRES_COPY_IN) {
        stop(PgError::from_libpq(target_.label_ + ": " + PgConnection::first_line(copy_in), started.raw(), to)
                 .without_position());
        continue;
      }
      copying = true;
    }
    if (check && (PQgetisnull(raw, 0, copied_columns) || std::strcmp(PQgetvalue(raw, 0, copied_columns), "t") != 0)) {
      std::optional<std::string> value;
      if (checked_column >= 0 && !PQgetisnull(raw, 0, checked_column)) value = PQgetvalue(raw, 0, checked_column);
      // The query returned a row it must not: no retry can fix the query.
      stop(PgError(ErrorKind::Permanent, check->describe(value)));
      continue;
    }
    const auto buffer_before = static_cast<std::int64_t>(buffer.size());
    for (int c = 0; c < copied_columns; ++c) {
      if (c) buffer += '\t';
      if (PQgetisnull(raw, 0, c)) {
        buffer += "\\N";
      } else {
        append_copy_field(buffer, PQgetvalue(raw, 0, c), PQgetlength(raw, 0, c));
      }
    }
    buffer += '\n';
    ++rows;
    metered.add(static_cast<std::int64_t>(buffer.size()) - buffer_before);
    if (buffer.size() >= kFlushBytes) {
      if (PQputCopyData(to, buffer.data(), static_cast<int>(buffer.size())) != 1) {
        stop(PgError(ErrorKind::Transient, target_.label_ + ": sending COPY data: " + connection_error_text(to)));
      }
      buffer.clear();
    }
  }
  // The source's part is done: its transaction ends before the target's
  // COPY does, so that it never idles in one meanwhile.
  if (own_transaction && !failure) {
    try {
      source_.exec("COMMIT");
    } catch (const PgError& e) {
      failure = e;
    }
  }
  if (copying) {
    if (!failure && !buffer.empty() && PQputCopyData(to, buffer.data(), static_cast<int>(buffer.size())) != 1) {
      failure = PgError(ErrorKind::Transient, target_.label_ + ": sending COPY data: " + connection_error_text(to));
    }
    PQputCopyEnd(to, failure ? failure->what() : nullptr);
    PGresult* finished = PQgetResult(to);
    const PgResult result(finished);
    if (!failure && PQresultStatus(finished) != PGRES_COMMAND_OK) {
      failure = PgError::from_libpq(target_.label_ + ": COPY into " + target_table, finished, to).without_position();
    }
    target_.drain_results();
  }
  if (failure) {
    if (own_transaction) source_.rollback_quietly();
    target_.needs_reset_ = source_.needs_reset_ = true;
    throw *failure;
  }
  return rows;
}

}  // namespace tidemark
