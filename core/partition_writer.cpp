#include "core/partition_writer.h"

#include <cstdlib>

namespace tidemark {
namespace {

std::string local_date(Instant t, const TimeZone& zone) {
  return date::format("%F", date::floor<date::days>(zone.to_local(t)));
}

std::string local_time(Instant t, const TimeZone& zone) { return date::format("%F %T", zone.to_local(t)); }

}  // namespace

Window PartitionWriter::as_window(const TimeWindow& partition) {
  const auto micros = [](Instant t) {
    return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
  };
  return Window{CursorValue{CursorType::TimestampTz, micros(partition.lo)},
                CursorValue{CursorType::TimestampTz, micros(partition.hi)}};
}

RunSummary PartitionWriter::write(const TimeWindow& partition, RunTrigger trigger, bool wait) {
  if (table_.mode != TableMode::Partition) std::abort();
  RunSummary summary;
  summary.table = TableKey{pipeline_.name, table_.name};
  summary.range = as_window(partition);
  summary.partitions = true;
  if (lock_taken(state_.lock_partition(summary.table, partition, wait), "partition", summary)) {
    const Status written = [&]() -> Status {
      if (const auto abandoned = state_.fail_abandoned_runs(summary.table, summary.range); !abandoned) {
        return abandoned.failure();
      }
      const auto run = state_.start_run(RunStart{summary.table, trigger, std::nullopt, summary.range});
      if (!run) return run.failure();
      summary.run = *run;
      const TimeZone& zone = *pipeline_.zone;
      PartitionRequest request{summary.table,
                               *run,
                               partition,
                               local_date(partition.lo, zone),
                               local_date(partition.hi, zone),
                               local_time(partition.lo, zone),
                               local_time(partition.hi, zone),
                               table_.partition->unit == PartitionUnit::Hour};
      const auto counts = target_.write_partition(table_, request);
      if (!counts) return counts.failure();
      summary.rows_read = counts->rows_read;
      summary.rows_written = counts->rows_written;
      summary.chunks = 1;
      return ok_status();
    }();
    conclude(summary, written, /*cancelled=*/false);
    if (summary.run != 0) {
      if (!written) state_.mark_partition_failed(summary.table, partition, summary.run);
      state_.finish_run(summary.run, run_end(summary));
    }
    state_.unlock_partition(summary.table, partition);
  }
  observer_.on_run_finished(summary);
  return summary;
}

}  // namespace tidemark
