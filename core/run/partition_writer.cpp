#include "core/run/partition_writer.h"

#include <cstdlib>

#include "core/run/input_horizon.h"
#include "core/run/run_lifecycle.h"
#include "core/run/run_step.h"

namespace tidemark {
namespace {

std::string local_date(Instant t, const TimeZone& zone) {
  return date::format("%F", date::floor<date::days>(zone.to_local(t)));
}

std::string local_time(Instant t, const TimeZone& zone) { return date::format("%F %T", zone.to_local(t)); }

}  // namespace

PartitionRequest partition_request(const TableKey& table, RunId run, const TimeWindow& partition,
                                   const TimeZone& zone, PartitionUnit unit) {
  return PartitionRequest{table,
                          run,
                          partition,
                          local_date(partition.lo, zone),
                          local_date(partition.hi, zone),
                          local_time(partition.lo, zone),
                          local_time(partition.hi, zone),
                          unit == PartitionUnit::Hour};
}

RunSummary PartitionWriter::write(const TimeWindow& partition, RunTrigger trigger, bool wait, const Why& why) {
  if (run_.table.mode != TableMode::Partition) std::abort();
  const RunLock lock{run_.key(), partition};
  RunLifecycle run(run_.state, run_.ownership, run_.observer, lock, trigger);
  const Status outcome = [&]() -> Status {
    if (!run.open(wait)) return ok_status();
    RunSummary& summary = run.summary();
    const PartitionRequest request =
        partition_request(summary.table, summary.run, partition, *run_.pipeline.zone, run_.table.partition->unit);
    StepRecord record;
    record.lock = lock;
    record.lock_label = request.lo_date;
    record.run = summary.run;
    record.partition_done = true;
    // A partition written a first time lies past the dependents' done
    // ones (they wait for this table's done partitions without a gap),
    // unless it fills a gap; flagging finds nothing then.
    record.recheck = downstream_recheck(run_.pipeline, run_.table, partition.lo,
                                        "rewrote partition " + partition_label(partition, run_.table.partition->unit,
                                                                               *run_.pipeline.zone));
    record.input_changes_seen = why.input_changes_seen;
    summary.rewrite_reason = why.rewrite_reason;
    const auto counts = commit_partition(run_.target, run_.table, request, record);
    if (!counts) return counts.failure();
    summary.rows_read = counts->rows_read;
    summary.rows_written = counts->rows_written;
    summary.chunks = 1;
    return ok_status();
  }();
  return run.finish(outcome, /*cancelled=*/false);
}

}  // namespace tidemark
