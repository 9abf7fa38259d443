// Helpers that commit a first load's page ranges beside the run's own
// sessions, each reading the one snapshot the run's source holds
// (Source::open_snapshot) on sessions of its own. Built by whoever builds
// the run's ports (daemon/pg/data/pg_range_crew.h); run() is called on the
// run's thread and calls its job there and on its helpers' threads.
#pragma once

#include <cstddef>
#include <functional>

#include "core/run/run_ports.h"

namespace tidemark {

class RangeCrew {
 public:
  // One range's unit of work through `target`: the run's own, or a helper's.
  using Job = std::function<Result<ChunkCounts>(Target& target, std::size_t index)>;
  // Hears each job that committed; calls come one at a time, on any of
  // the crew's threads.
  using Done = std::function<void(std::size_t index, const ChunkCounts& counts)>;

  virtual ~RangeCrew() = default;
  // Runs job(i) once for each i in [0, count), in order of i as they are
  // taken: on the calling thread through `own`, and on up to `helpers`
  // helpers of the table's run. A helper that cannot start (no free place
  // in the daemon's bound, its sessions or the snapshot out of reach) is
  // left out, never an error: fewer do the work. After a job fails, or the
  // run is cancelled, none starts; the first failure is returned once
  // every job started has ended.
  virtual Status run(const TableConfig& table, Target& own, std::size_t count, int helpers, const Job& job,
                     const Done& done) = 0;
};

}  // namespace tidemark
