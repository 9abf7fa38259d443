#include "daemon/serve/unreachable_database.h"

namespace tidemark {
namespace {

// The unit of work begun on a database that could not be reached: every
// step fails, and nothing is committed.
class UnreachableWork final : public UnitOfWork {
 public:
  explicit UnreachableWork(Error error) : error_(std::move(error)) {}
  Status create_table(const TableConfig&, const SourceTable&) override { return failure(); }
  Status add_columns(const TableConfig&, const std::vector<ColumnShape>&) override { return failure(); }
  Result<ChunkCounts> write_chunk(const TableConfig&, const SourceTable&, const Window&) override { return failure(); }
  Result<SnapshotWrite> replace_table(const TableConfig&, const SourceTable&,
                                      const std::optional<SnapshotHorizon>&) override {
    return failure();
  }
  Result<RangeWrite> write_range(const TableConfig&, const SourceTable&, const PageRange&, bool) override {
    return failure();
  }
  Result<ChunkCounts> replace_partition(const TableConfig&, const PartitionRequest&) override { return failure(); }
  Result<ReconcileWrite> reconcile(const TableConfig&, const SourceTable&, const ReconcileFix&) override {
    return failure();
  }
  Result<StepRecorded> record(const StepRecord&) override { return failure(); }
  Status commit() override { return failure(); }

 private:
  Error failure() const { return error_; }

  Error error_;
};

}  // namespace

std::unique_ptr<UnitOfWork> UnreachableDatabase::begin(const RunLock&) {
  return std::make_unique<UnreachableWork>(error_);
}

}  // namespace tidemark
