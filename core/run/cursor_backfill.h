// `tidemark backfill` on an incremental table: re-reads a cursor range
// [from, to) through the keyed write, chunk by chunk (max_window), without
// moving the watermark. Takes the table's lock, so it never races a
// scheduled run writing the same rows. One instance per backfill, on the
// calling thread.
#pragma once

#include <string>

#include "core/run/column_check.h"
#include "core/run/run_context.h"

namespace tidemark {

class CursorBackfill {
 public:
  explicit CursorBackfill(const RunContext& context) : run_(context) {}

  // `from` and `to` are values of the cursor's type; for timestamptz
  // cursors a date or time without an offset is in the pipeline's zone.
  RunSummary execute(const std::string& from, const std::string& to);

 private:
  Status reload(const std::string& from, const std::string& to, const std::optional<std::vector<ColumnShape>>& loaded,
                RunSummary& summary);

  const RunContext run_;  // references only: the run owns none of it
};

}  // namespace tidemark
