// Writes a list of partitions with up to N worker threads, each
// partition on its own ports (JobPorts: state, source, and target unless
// it is the state database), from sessions the workers share. Every partition waits for its own advisory lock, so a
// backfill and the daemon never write the same partition at once.
// Used from the backfill command's thread; run() blocks until done.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "core/config/config_model.h"
#include "core/run/cancel_token.h"
#include "core/time/partition_calendar.h"
#include "daemon/commands/backfill_progress.h"
#include "daemon/pg/libpq/connection_pool.h"

namespace tidemark {

class PartitionBackfill {
 public:
  // `input_changes`: for a table with inputs, their count of changes as
  // read with the inputs that said which partitions are complete
  // (PartitionHorizon::input_changes).
  PartitionBackfill(std::shared_ptr<const Config> config, const PipelineConfig& pipeline, const TableConfig& table,
                    std::optional<std::int64_t> input_changes = std::nullopt)
      : config_(std::move(config)), pipeline_(pipeline), table_(table), input_changes_(input_changes) {}

  // Writes `partitions` (oldest first), `parallel` at a time, reporting
  // each to `progress`. Stops handing out partitions once `cancel` is set.
  void run(const std::vector<TimeWindow>& partitions, int parallel, BackfillProgress& progress,
           const CancelToken& cancel);

 private:
  void work(const std::vector<TimeWindow>& partitions, std::size_t& next, std::mutex& next_mutex,
            ConnectionPool& sessions, BackfillProgress& progress, const CancelToken& cancel);

  std::shared_ptr<const Config> config_;
  const PipelineConfig& pipeline_;
  const TableConfig& table_;
  std::optional<std::int64_t> input_changes_;
};


}  // namespace tidemark
