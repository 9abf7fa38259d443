// A RunObserver that logs every committed chunk (debug level) and nothing
// else: the run's own line is its job's end (daemon/serve/job_log.h). Stateless; thread-safe.
#pragma once

#include "core/run/run_observer.h"

namespace tidemark {

class ChunkLogger final : public RunObserver {
 public:
  void on_chunk_committed(const TableKey& table, const Window& window, const ChunkCounts& counts,
                          const CursorValue& watermark) override;
  void on_range_committed(const TableKey& table, const LoadRange& range, int done, int all,
                          const ChunkCounts& counts) override;
};

}  // namespace tidemark
