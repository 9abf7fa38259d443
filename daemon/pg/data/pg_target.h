// The Target over a target database connection: checks the target table
// and begins units of work (daemon/pg_unit_of_work.h) that load chunks
// and partitions. When the state lives in the target database the state
// store works on this same connection, so rows and watermark commit as one
// transaction and the lock sits on the committing session. Owns nothing;
// used by one run on one thread.
#pragma once

#include <functional>
#include <memory>

#include "core/run/cancel_token.h"
#include "core/run/run_ports.h"
#include "core/sql/verify_statements.h"
#include "daemon/pg/data/pg_source.h"
#include "daemon/pg/data/pg_unit_of_work.h"
#include "daemon/pg/libpq/pg_connection.h"
#include "daemon/pg/state/step_recorder.h"

namespace tidemark {

class PgTarget final : public Target {
 public:
  // `steps` records what each unit of work commits; a target without
  // one (nullptr: `validate`'s checks) begins none. `catalog`, when given,
  // keeps what check() reads while the table's catalog rows stay unchanged.
  PgTarget(PgConnection& target, PgSource& source, StepRecorder* steps, const CancelToken& cancel,
           CatalogCache* catalog = nullptr)
      : target_(target), source_(source), steps_(steps), cancel_(cancel), catalog_(catalog) {}

  // Also keeps the target's column types, from which the units of work
  // begun after it choose each chunk's COPY format (core/sql/copy_format.h):
  // binary when both sides have the same built-in types and server major
  // version, else text.
  Result<TargetTable> check(const TableConfig& table) override;
  // As PgSource::about_to_inspect, for check(): the target tables' versions.
  void about_to_check(const std::vector<const TableConfig*>& tables) override;
  Result<bool> holds_rows(const TableConfig& table) override;
  PgConnection& connection() { return target_; }
  std::unique_ptr<UnitOfWork> begin(const RunLock& lock) override;
  // Takes the two-int lock a range helper's units hold shared
  // (PgUnitOfWork), and lets it go at once.
  Status await_range_helpers(const RunLock& lock) override;
  // Makes the units begun from now on a range helper's (PgRangeCrew).
  void help() { helper_ = true; }
  // Both sides' count and checksum (core/sql/verify_statements.h) at once,
  // the query's columns read as the target stores them.
  Result<PartitionComparison> compare_partition(const TableConfig& table, const PartitionRequest& request) override;

  // The COPY format of a chunk of `source`'s columns, after check().
  CopyFormat copy_format(const SourceTable& source) const { return copy_types_.format_for(source.columns, source.catalog); }

  // Test hook: called at each ChunkStep of every unit of work; throwing
  // there simulates a crash.
  void set_fault_hook(std::function<void(ChunkStep)> hook) { fault_hook_ = std::move(hook); }

 private:
  // What check() returns: kept in the catalog cache, or read_table().
  Result<TargetTable> find_table(const TableConfig& table);
  // What check() returns, read from the catalogs.
  Result<TargetTable> read_table(const TableConfig& table);

  PgConnection& target_;
  PgSource& source_;
  StepRecorder* steps_;
  const CancelToken& cancel_;
  CatalogCache* catalog_;
  std::optional<RelationVersions> versions_;  // read_versions()'s
  std::function<void(ChunkStep)> fault_hook_;
  bool helper_ = false;  // help()
  TargetCopyTypes copy_types_;  // from the last check(), or from the unit that made the table since
  // What a partition check reads once for a target table (its quoted
  // name): the partition column's type and the statements, the same for
  // each partition of a run.
  struct PartitionCheck {
    std::string table;
    std::string column_type;
    PartitionVerifyQueries queries;
  };
  std::optional<PartitionCheck> partition_check_;
};

}  // namespace tidemark
