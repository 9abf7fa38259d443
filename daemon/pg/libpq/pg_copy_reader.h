// One COPY ... TO STDOUT read row by row on one connection: sent when
// made, so that several readers on several connections run at once, then
// each CopyData message handed out as it arrives. Owned by its caller for
// one statement on one thread; the connection takes nothing else until the
// reader has ended (an unfinished one is cancelled when destroyed, which
// leaves a transaction failed). Failures throw PgError.
#pragma once

#include <optional>
#include <string>
#include <string_view>

extern "C" {
typedef struct pg_result PGresult;
}

namespace tidemark {

class PgConnection;

class PgCopyReader {
 public:
  PgCopyReader(PgConnection& connection, std::string copy_out);
  ~PgCopyReader();
  PgCopyReader(const PgCopyReader&) = delete;
  PgCopyReader& operator=(const PgCopyReader&) = delete;

  // The next message (one row; a binary COPY's first also carries the file
  // header, its last the trailer), valid until the next call; nothing once
  // the COPY has ended well.
  std::optional<std::string_view> next();

 private:
  void release();
  // Ends the reader with the error `result` (freed) reports. Throws PgError.
  [[noreturn]] void fail(PGresult* result);

  PgConnection& connection_;
  std::string copy_out_;
  bool started_ = false;  // the server said it is copying
  bool ended_ = false;
  char* data_ = nullptr;  // the message handed out last, libpq's
};

}  // namespace tidemark
