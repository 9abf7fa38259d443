// Rows streamed with COPY from one session into another (a COPY TO STDOUT
// or a query's rows, into a COPY FROM STDIN), in the same memory for any
// number of rows (a COPY's rows read ahead while the target waits spill
// to a file: read_together.h). Made by its caller for one unit of work's copies, on one
// thread; neither session takes anything else while a copy runs. Failures
// throw PgError; after one the target's COPY is aborted (its transaction
// must be rolled back) and the session that failed needs a reset, both
// after a failure mid-stream.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "daemon/pg/libpq/pg_connection.h"

namespace tidemark {

class CancelToken;

// A condition every row of PgCopyStream::copy_query must meet. The
// query's last result column is a boolean the caller adds for it and is
// not copied; the first row where it is not true stops the copy, and
// `describe` turns that row's value of `column` (nothing when NULL) into
// the error, a permanent one: no retry changes what the query returns.
struct CopyRowCheck {
  std::string column;
  std::function<std::string(const std::optional<std::string>& value)> describe;
};

class PgCopyStream {
 public:
  // From `source` into `target`, checking `cancel` as the rows go (a
  // cancelled copy fails, transient). All three must outlive the stream.
  PgCopyStream(PgConnection& source, PgConnection& target, const CancelToken& cancel);

  // Streams `copy_out` (COPY ... TO STDOUT) from the source into the
  // target, chunk by chunk. Only when the first row arrives is
  // `prepare_copy_in` called, to do what the target needs first and return
  // its COPY ... FROM STDIN; a source with no rows leaves the target
  // untouched and returns 0. Returns the rows the target accepted. With
  // `binary` both statements must be COPY ... (FORMAT binary): the source
  // then sends its file header and trailer even without rows, and such a
  // stream also leaves the target untouched. `before`, when given, is sent
  // ahead of `copy_out` in the same round trip, so that its statements and
  // the COPY form one transaction; the results of those of them that
  // return rows go to `before_rows`.
  std::int64_t copy(const std::string& copy_out, const std::function<std::string()>& prepare_copy_in,
                    bool binary = false, const std::string& before = {}, std::vector<PgResult>* before_rows = nullptr);

  // Runs `query` on the source with typed parameters (OIDs in `types`) and
  // streams its rows into `target_table` on the target with COPY, into the
  // columns the query names. Values pass through as text; there is no SQL
  // splicing. With `check`, every row must pass it (see CopyRowCheck).
  // Returns the rows copied. A failure of the query itself carries the
  // server's SQLSTATE and position; the target's refusal its SQLSTATE only.
  std::int64_t copy_query(const std::string& query, const PgParams& params, const std::vector<PgOid>& types,
                          const std::string& target_table, const CopyRowCheck* check = nullptr);

 private:
  PgConnection& source_;
  PgConnection& target_;
  const CancelToken& cancel_;
};

}  // namespace tidemark
