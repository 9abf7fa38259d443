// `tidemark backfill` on an incremental table: re-reads a cursor range
// [from, to) through the keyed write, chunk by chunk (max_window), without
// moving the watermark. Takes the table's lock, so it never races a
// scheduled run writing the same rows. One instance per backfill, on the
// calling thread.
#pragma once

#include <string>

#include "core/cancel_token.h"
#include "core/config_model.h"
#include "core/run_observer.h"
#include "core/run_ports.h"

namespace tidemark {

class CursorBackfill {
 public:
  CursorBackfill(const PipelineConfig& pipeline, const TableConfig& table, StateStore& state, Source& source,
                 Target& target, RunObserver& observer, const CancelToken& cancel)
      : pipeline_(pipeline),
        table_(table),
        state_(state),
        source_(source),
        target_(target),
        observer_(observer),
        cancel_(cancel) {}

  // `from` and `to` are values of the cursor's type; for timestamptz
  // cursors a date or time without an offset is in the pipeline's zone.
  RunSummary execute(const std::string& from, const std::string& to);

 private:
  Status reload(const std::string& from, const std::string& to, RunSummary& summary);

  const PipelineConfig& pipeline_;
  const TableConfig& table_;
  StateStore& state_;
  Source& source_;
  Target& target_;
  RunObserver& observer_;
  const CancelToken& cancel_;
};

}  // namespace tidemark
