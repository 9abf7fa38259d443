#include "daemon/pg/state/run_history_pruner.h"

#include <string>

#include "daemon/pg/libpq/pg_error.h"
#include "daemon/pg/libpq/result_columns.h"
#include "daemon/pg/state/runs_table.h"

namespace tidemark {

Result<PruneReport> RunHistoryPruner::prune(std::chrono::seconds retention, const std::function<bool()>& stop) {
  PruneReport report;
  return as_result([&] {
    const std::string interval = std::to_string(retention.count()) + " seconds";
    std::int64_t after = 0;
    for (;;) {
      const PgResult r =
          state_.exec(prune_batch_sql(), {interval, std::to_string(after), std::to_string(batch_rows_)});
      const ResultColumns c(r);
      if (!r.boolean(0, c("held"))) {
        report.busy = true;
        return report;
      }
      ++report.batches;
      report.deleted += r.integer(0, c("deleted"));
      after = r.integer(0, c("last_run_id"));
      if (r.boolean(0, c("reached"))) {  // reached the retention, or the end
        report.complete = true;
        return report;
      }
      if (stop && stop()) return report;
    }
  });
}

}  // namespace tidemark
