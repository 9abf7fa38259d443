#include "daemon/commands/partition_backfill.h"

#include <mutex>
#include <thread>

#include "core/run/partition_writer.h"
#include "daemon/commands/chunk_logger.h"
#include "daemon/commands/command_support.h"
#include "daemon/serve/job_ports.h"

namespace tidemark {
namespace {

// Long enough to carry a worker's sessions from one partition to the next.
constexpr std::chrono::seconds kBackfillIdleSessionTimeout{60};

}  // namespace

void PartitionBackfill::run(const std::vector<TimeWindow>& partitions, int parallel, BackfillProgress& progress,
                            const CancelToken& cancel) {
  std::size_t next = 0;
  std::mutex next_mutex;
  const std::size_t workers = std::min<std::size_t>(static_cast<std::size_t>(std::max(parallel, 1)), partitions.size());
  // Each worker's sessions go back here between partitions; one a failed
  // partition broke is not reused.
  ConnectionPool sessions(workers, kBackfillIdleSessionTimeout);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < workers; ++i) {
    threads.emplace_back([&] { work(partitions, next, next_mutex, sessions, progress, cancel); });
  }
  for (std::thread& t : threads) t.join();
}

void PartitionBackfill::work(const std::vector<TimeWindow>& partitions, std::size_t& next, std::mutex& next_mutex,
                             ConnectionPool& sessions, BackfillProgress& progress, const CancelToken& cancel) {
  ChunkLogger observer;
  for (;;) {
    std::size_t index = 0;
    {
      const std::lock_guard<std::mutex> lock(next_mutex);
      if (cancel.cancelled() || next >= partitions.size()) return;
      index = next++;
    }
    const TimeWindow& partition = partitions[index];
    const std::string label = partition_label(partition, table_.partition->unit, *pipeline_.zone);
    const auto started = std::chrono::steady_clock::now();
    RunSummary summary;
    JobPorts ports(*config_, pipeline_, JobSessions{&sessions}, cancel, /*pipeline_time_zone=*/true);
    if (ports.state_unreachable()) {
      summary = ports.unrecorded_failure(TableKey{pipeline_.name, table_.name});
    } else {
      summary = PartitionWriter(RunContext{pipeline_, table_, ports.state(), ports.source(), ports.target(), observer,
                                           cancel, sole_owner()})
                    .write(partition, RunTrigger::Backfill, /*wait=*/true, {"", input_changes_});
    }
    progress.finished(label, summary,
                      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started));
  }
}

}  // namespace tidemark
