// Stands in for a source or target database a job could not reach: every
// call fails with why, so the job still takes its table's lock and records
// its failure in its run row, as any other failure (JobPorts). Owned by
// the job's ports, on the job's thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/reconcile/reconcile_ports.h"
#include "core/run/run_ports.h"

namespace tidemark {

class UnreachableDatabase final : public Source, public Target, public KeySide {
 public:
  explicit UnreachableDatabase(Error error) : error_(std::move(error)) {}

  Result<SourceTable> inspect(const TableConfig&) override { return failure(); }
  Result<HorizonReading> read_horizon(const TableConfig&, CursorType, std::optional<SourceMicros>) override {
    return failure();
  }
  Result<CursorValue> cursor_at(SourceMicros, CursorType) override { return failure(); }
  Result<std::optional<CursorValue>> lower_bound(const TableConfig&, CursorType) override { return failure(); }
  Result<WindowProbe> probe(const TableConfig&, const SourceTable&, const std::optional<Window>&) override {
    return failure();
  }
  Result<std::optional<std::int64_t>> count_changes(const TableConfig&) override { return failure(); }
  Result<std::optional<TableExtent>> measure(const TableConfig&, const SourceTable&) override { return failure(); }
  Result<std::optional<HeldSnapshot>> open_snapshot(const TableConfig&, const SourceTable&) override {
    return failure();
  }
  void close_snapshot() override {}

  Result<TargetTable> check(const TableConfig&) override { return failure(); }
  Result<bool> holds_rows(const TableConfig&) override { return failure(); }
  std::unique_ptr<UnitOfWork> begin(const RunLock&) override;
  Status await_range_helpers(const RunLock&) override { return failure(); }
  Result<PartitionComparison> compare_partition(const TableConfig&, const PartitionRequest&) override {
    return failure();
  }

  Result<std::int64_t> estimate_rows() override { return failure(); }
  Status send_bucket_sums(std::int64_t, const KeyCompare&) override { return failure(); }
  Result<std::vector<BucketSum>> bucket_sums() override { return failure(); }
  Status send_open_keys(std::int64_t, const std::vector<std::int64_t>&, const KeyCompare&) override {
    return failure();
  }
  Status open_keys() override { return failure(); }
  Result<std::vector<KeyRow>> next_keys(std::size_t) override { return failure(); }
  void close_keys() override {}
  Result<std::vector<std::size_t>> held_now(const std::vector<KeyRow>&) override { return failure(); }

 private:
  Error failure() const { return error_; }

  Error error_;
};

}  // namespace tidemark
