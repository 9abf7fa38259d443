// The Target over a target database connection: checks the target table
// and loads one chunk (COPY from the source, upsert on the key, watermark
// compare-and-set). When the state lives in the target database the state
// store works on this same connection, so the load and the watermark
// commit as one transaction and the lock sits on the committing session.
// Owns nothing; used by one run on one thread.
#pragma once

#include <functional>

#include "core/cancel_token.h"
#include "core/run_ports.h"
#include "daemon/pg_connection.h"
#include "daemon/pg_source.h"
#include "daemon/pg_state_store.h"

namespace tidemark {

// Points in a chunk where tests inject failures.
enum class ChunkStep { BeforeTargetWrite, AfterTargetWrite, AfterCommit };

class PgTarget final : public Target {
 public:
  PgTarget(PgConnection& target, PgSource& source, PgStateStore& state, const CancelToken& cancel)
      : target_(target), source_(source), state_(state), cancel_(cancel) {}

  Status check(const TableConfig& table, const SourceTable& source) override;
  Result<ChunkCounts> load_chunk(const TableConfig& table, const SourceTable& source,
                                 const ChunkRequest& request) override;
  Result<ChunkCounts> write_partition(const TableConfig& table, const PartitionRequest& request) override;

  // Test hook: called at each ChunkStep; throwing there simulates a crash.
  void set_fault_hook(std::function<void(ChunkStep)> hook) { fault_hook_ = std::move(hook); }

 private:
  // One target transaction: `write` loads the rows, `record` records them
  // in the state (see commit_with_state); the fault hook is called between
  // the steps. Every failure rolls back and comes back as an Error.
  Result<ChunkCounts> in_transaction(const std::function<ChunkCounts()>& write,
                                     const std::function<void(PgConnection&, const ChunkCounts&)>& record);
  // Commits the open target transaction together with `record_state`
  // (one transaction when the state shares this connection; else the load
  // first, then the state on the state connection). Throws on failure.
  void commit_with_state(const std::function<void(PgConnection&)>& record_state);
  bool state_shares_connection() const { return &state_.connection() == &target_; }
  void step(ChunkStep s) const {
    if (fault_hook_) fault_hook_(s);
  }

  PgConnection& target_;
  PgSource& source_;
  PgStateStore& state_;
  const CancelToken& cancel_;
  std::function<void(ChunkStep)> fault_hook_;
};

}  // namespace tidemark
