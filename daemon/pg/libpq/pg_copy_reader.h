// One COPY ... TO STDOUT read row by row on one connection: sent when
// made, so that several readers on several connections run at once, then
// each CopyData message handed out as it arrives. On a session read
// together with others (read_together.h) the messages that arrive while
// another is read wait in a spill queue. Owned by its caller for one
// statement on one thread; the connection takes nothing else until the
// reader has ended (an unfinished one is cancelled when destroyed, which
// leaves a transaction failed). Failures throw PgError.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/pg/libpq/spill_queue.h"

extern "C" {
typedef struct pg_result PGresult;
}

namespace tidemark {

class PgConnection;
class PgResult;

class PgCopyReader {
 public:
  // `before`, when given, is sent ahead of `copy_out` in the same round
  // trip, so that its statements and the COPY form one transaction; the
  // results of those of them that return rows go to `before_rows`, which
  // must outlive the reader.
  PgCopyReader(PgConnection& connection, std::string copy_out, const std::string& before = {},
               std::vector<PgResult>* before_rows = nullptr);
  ~PgCopyReader();
  PgCopyReader(const PgCopyReader&) = delete;
  PgCopyReader& operator=(const PgCopyReader&) = delete;

  // The next message (one row; a binary COPY's first also carries the file
  // header, its last the trailer), valid until the next call; nothing once
  // the COPY has ended well.
  std::optional<std::string_view> next();

  // Takes in what has arrived, without blocking, and keeps every whole
  // message in the queue (PgConnection::read_arrived); false once it
  // takes nothing more (the COPY's rows are all in, or it failed: next()
  // says so in its turn).
  bool take_arrived();

  // Bytes taken in ahead of the caller so far.
  std::uint64_t read_ahead_bytes() const { return read_ahead_bytes_; }

  // Messages past this many bytes in the queue go to a file.
  static constexpr std::size_t kMemoryBound = std::size_t{8} << 20;

 private:
  void release();
  // The reader has ended: the connection takes other statements again.
  void end();
  // Ends the reader with the error `result` (freed) reports. Throws PgError.
  [[noreturn]] void fail(PGresult* result);
  // Ends the reader with an error of its own. Throws PgError.
  [[noreturn]] void fail_with(const std::string& what);
  // Waits for the socket, reading the sessions read together meanwhile,
  // and takes in what arrived.
  void wait();
  // Whether the next result is still to come (PQgetResult would block).
  bool result_waits();
  // Takes the results before the COPY's rows, as far as they have come;
  // true once the COPY is under way. A failure is kept in refused_.
  bool take_start();
  // Now and then, reads the sessions read together that are due.
  void tend();

  PgConnection& connection_;
  std::string copy_out_;
  std::vector<PgResult>* before_rows_;
  bool started_ = false;    // the server said it is copying
  bool copy_done_ = false;  // libpq has seen the last message
  bool broken_ = false;     // the connection broke mid-COPY
  bool ended_ = false;      // the COPY's result was taken
  PGresult* refused_ = nullptr;  // the server's refusal, taken in while reading ahead
  std::string spill_failure_;    // why the queue could not keep a message
  char* data_ = nullptr;    // the message handed out last, libpq's
  SpillQueue queue_;
  std::uint64_t read_ahead_bytes_ = 0;
  std::size_t since_tended_ = 0;  // messages handed out since the group was last tended
};

}  // namespace tidemark
