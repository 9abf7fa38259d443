#include "daemon/pg/run_history_pruner.h"

#include <string>

#include "daemon/pg/pg_error.h"

namespace tidemark {

Result<PruneReport> RunHistoryPruner::prune(std::chrono::seconds retention, const std::function<bool()>& stop) {
  // The next `batch` runs by run_id after the last batch's, and of them
  // those to remove. run_id follows started_at (both are set by the
  // statement that inserts the run), so the pass ends at the first batch
  // that reaches a run inside the retention. The lock's two-integer key
  // ('tide' in ASCII, then 1 for pruning) lives apart from the tables'
  // one-bigint run locks.
  static const std::string kBatch = R"SQL(
with lock as (select pg_try_advisory_xact_lock(1953064037, 1) as held),
batch as (
  select r.run_id, r.pipeline, r.table_name, r.trigger, r.status, r.started_at
  from tidemark.runs r, lock
  where lock.held and r.run_id > $2::bigint
  order by r.run_id
  limit $3::bigint),
doomed as (
  select b.run_id from batch b
  where b.started_at < now() - $1::interval and b.status <> 'running'
    and exists (select from tidemark.runs n
                where n.pipeline = b.pipeline and n.table_name = b.table_name and n.status = 'success'
                      and n.trigger = b.trigger and n.run_id > b.run_id)
    and not exists (select from tidemark.watermarks w where w.last_run_id = b.run_id)
    and not exists (select from tidemark.partitions p where p.run_id = b.run_id)),
gone as (delete from tidemark.runs d where d.run_id in (select run_id from doomed) returning 1)
select (select held from lock), (select count(*) from gone), coalesce((select max(run_id) from batch), 0),
       coalesce((select bool_or(started_at >= now() - $1::interval) from batch), true)
)SQL";
  PruneReport report;
  try {
    const std::string interval = std::to_string(retention.count()) + " seconds";
    std::int64_t after = 0;
    for (;;) {
      const PgResult r = state_.exec(kBatch, {interval, std::to_string(after), std::to_string(batch_rows_)});
      if (!r.boolean(0, 0)) {
        report.busy = true;
        return report;
      }
      ++report.batches;
      report.deleted += r.integer(0, 1);
      after = r.integer(0, 2);
      if (r.boolean(0, 3)) {  // reached the retention, or the end
        report.complete = true;
        return report;
      }
      if (stop && stop()) return report;
    }
  } catch (const PgError& e) {
    return e.as_error();
  }
}

}  // namespace tidemark
