// Prunes tidemark.runs to the history's retention (history.retention), in
// small batches, each its own short transaction. Keeps every run that
// status, the alerts and the catch-up rule read. Owned by its caller
// (serve's StateMonitor), with the state connection it is given; one
// thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>

#include "core/result.h"
#include "daemon/pg/libpq/pg_connection.h"

namespace tidemark {

struct PruneReport {
  std::int64_t deleted = 0;  // run rows removed
  int batches = 0;
  // Another member held the pruning lock: it prunes, this one stopped.
  bool busy = false;
  // The pass reached the retention; false when `stop` ended it first.
  bool complete = false;
};

class RunHistoryPruner {
 public:
  explicit RunHistoryPruner(PgConnection& state, std::int64_t batch_rows = 5000)
      : state_(state), batch_rows_(batch_rows) {}

  // One pass over the runs that started before now() - retention (the
  // state database's clock), oldest first. A run is removed only once a
  // later run of the same trigger on the same table has succeeded,
  // so each table keeps its last run and last success of each trigger and
  // every failure since (its current failure streak); nor a run still
  // `running`, nor one a watermark or a partition names as its writer.
  // Watermark resets are never touched. Each batch takes a transaction
  // advisory lock first, so one member of a fleet prunes at a time.
  // `stop`, asked between batches, ends the pass early; the next pass
  // starts again from the oldest run. Requires the schema. Fails when a
  // statement does.
  Result<PruneReport> prune(std::chrono::seconds retention, const std::function<bool()>& stop = {});

 private:
  PgConnection& state_;
  std::int64_t batch_rows_;
};

}  // namespace tidemark
