// The loads of one pipeline's incremental tables that fired together, run
// as one where nothing is new: their locks taken, their state read, the
// source asked about every range and their runs recorded, each in one
// round trip for all of them. A table whose range holds rows, or that
// anything else sets apart (a first run, columns to settle, a failure
// along the way), is handed back to run on its own: a run of its own
// decides it, exactly as it would have without the batch. One per batch,
// on the worker's thread.
#pragma once

#include <optional>
#include <vector>

#include "core/run/cancel_token.h"
#include "core/run/run_observer.h"
#include "core/run/run_ports.h"
#include "core/run/table_ownership.h"

namespace tidemark {

// One table's firing in a batch.
struct BatchMember {
  const TableConfig* table = nullptr;
  RunTrigger trigger = RunTrigger::Schedule;
  std::optional<Instant> scheduled;  // the firing, recorded in its run row
};

class LoadBatch {
 public:
  // The ports are the pipeline's, shared by every member; `ownership` is
  // asked about each table whose lock the batch took, as a run of its own
  // asks. All must outlive the batch.
  LoadBatch(const PipelineConfig& pipeline, StateStore& state, Source& source, Target& target,
            RunObserver& observer, const CancelToken& cancel, const TableOwnership& ownership)
      : pipeline_(pipeline),
        state_(state),
        source_(source),
        target_(target),
        observer_(observer),
        cancel_(cancel),
        ownership_(ownership) {}

  // Requires every member's table in the pipeline and incremental. For each
  // member, in order: its run's summary, reported to the observer (a run
  // that found nothing new, or one skipped because its lock was held
  // elsewhere or its table is no longer this process's), or nothing: it is
  // to run on its own. Every lock it took is
  // released when it returns.
  std::vector<std::optional<RunSummary>> execute(const std::vector<BatchMember>& members);

 private:
  const PipelineConfig& pipeline_;
  StateStore& state_;
  Source& source_;
  Target& target_;
  RunObserver& observer_;
  const CancelToken& cancel_;
  const TableOwnership& ownership_;
};

}  // namespace tidemark
