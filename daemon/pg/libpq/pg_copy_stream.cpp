#include "daemon/pg/libpq/pg_copy_stream.h"

#include <libpq-fe.h>

#include <cstring>
#include <optional>

#include "core/run/cancel_token.h"
#include "core/run/run_meter.h"
#include "core/text/sql_identifier.h"

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
  pg_conn* const from = source_.conn_;
  pg_conn* const to = target_.conn_;
  if (!source_.sent_.empty()) std::abort();  // a statement sent is finished first
  const std::string sent = before.empty() ? copy_out : before + "; " + copy_out;
  if (!PQsendQuery(from, sent.c_str())) source_.fail(PgConnection::first_line(copy_out));
  // The statements before the COPY answer first, one result each.
  for (;;) {
    PgResult result(PQgetResult(from));
    const ExecStatusType status = PQresultStatus(result.raw());
    if (status == PGRES_COPY_OUT) break;
    if (result.raw() != nullptr && (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK)) {
      if (status == PGRES_TUPLES_OK && before_rows != nullptr) before_rows->push_back(std::move(result));
      continue;
    }
    // Nothing after a failed statement runs: the server is done with the string.
    source_.drain_results();
    source_.fail(PgConnection::first_line(copy_out), result.raw());
  }
  // The target is touched only once the first row arrives: a window with
  // no rows costs it nothing, not even a staging table.
  std::string copy_in;
  const auto start_copy_in = [&] {
    try {
      copy_in = prepare_copy_in();
    } catch (...) {
      source_.abandon_copy_out();
      throw;
    }
    const PgResult started(PQexec(to, copy_in.c_str()));
    if (PQresultStatus(started.raw()) != PGRES_COPY_IN) {
      source_.abandon_copy_out();
      target_.fail(PgConnection::first_line(copy_in), started.raw());
    }
  };

  // Each PQgetCopyData call returns one row; it goes on unparsed, with the
  // rows before it, once they fill a message.
  std::optional<PgError> failure;
  bool source_done = false;
  Metered metered(source_.meter_);
  // Never more than kFlushBytes: a row that would pass it sends the rows
  // before it first, and a row as large goes on by itself, as it came.
  std::string pending;
  pending.reserve(kFlushBytes);
  const auto send = [&](const char* bytes, std::size_t size) {
    const bool put = size == 0 || PQputCopyData(to, bytes, static_cast<int>(size)) == 1;
    if (!put) failure = PgError(ErrorKind::Transient, target_.label_ + ": sending COPY data: " + connection_error_text(to));
    return put;
  };
  const auto send_pending = [&] {
    const bool put = send(pending.data(), pending.size());
    pending.clear();
    return put;
  };
  for (;;) {
    if (cancel_.cancelled()) {
      failure = PgError(ErrorKind::Transient, cancel_.reason());
      break;
    }
    char* data = nullptr;
    const int n = PQgetCopyData(from, &data, 0);
    if (n > 0) {
      if (copy_in.empty() && binary && binary_copy_without_rows(data, n)) {
        PQfreemem(data);  // nothing between header and trailer: no row, the target stays untouched
        continue;
      }
      if (copy_in.empty()) {
        try {
          start_copy_in();
        } catch (...) {
          PQfreemem(data);
          throw;
        }
      }
      const auto size = static_cast<std::size_t>(n);
      metered.add(n);
      bool fine = pending.size() + size <= kFlushBytes || send_pending();
      if (fine && size >= kFlushBytes) {
        fine = send(data, size);
      } else if (fine) {
        pending.append(data, size);
      }
      PQfreemem(data);
      if (!fine) break;
      continue;
    }
    source_done = true;
    if (n == -2) {
      failure = PgError(ErrorKind::Transient, source_.label_ + ": reading COPY data: " + connection_error_text(from));
    }
    break;
  }
  if (source_done) {
    // The source's error after its rows began (a division by zero in a
    // later row): its SQLSTATE says what kind it is.
    auto source_error = source_.drain_results(source_.label_ + ": " + PgConnection::first_line(copy_out));
    if (!failure && source_error) failure = std::move(source_error);
  } else {
    source_.abandon_copy_out();
  }

  if (failure) {
    if (!copy_in.empty()) {
      PQputCopyEnd(to, failure->what());
      target_.drain_results();
    }
    target_.needs_reset_ = source_.needs_reset_ = true;
    throw *failure;
  }
  if (copy_in.empty()) return 0;  // the source had no rows: the target never saw a COPY
  if (!send_pending()) {
    PQputCopyEnd(to, failure->what());
    target_.drain_results();
    target_.needs_reset_ = source_.needs_reset_ = true;
    throw *failure;
  }
  if (PQputCopyEnd(to, nullptr) != 1) target_.fail("ending COPY");
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
  const std::vector<const char*> values = PgConnection::param_values(params);
  if (!PQsendQueryParams(from, query.c_str(), static_cast<int>(values.size()), types.data(), values.data(),
                         nullptr, nullptr, 0) ||
      !PQsetSingleRowMode(from)) {
    source_.fail("partition query");
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
    target_.needs_reset_ = source_.needs_reset_ = true;
    throw *failure;
  }
  return rows;
}

}  // namespace tidemark
