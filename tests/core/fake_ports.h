// In-memory stand-ins for the run ports: a state store with a watermark
// map and run rows, a source of (key, cursor) rows, and a target that
// copies the rows of a window and moves the watermark by compare-and-set,
// as the real one does, failing where a test asks it to.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/cancel_token.h"
#include "core/run_observer.h"
#include "core/run_ports.h"

namespace tidemark {

struct FakeRunRow {
  RunStart start;
  std::optional<RunEnd> end;
};

class FakeState final : public StateStore {
 public:
  std::optional<CursorValue> watermark;
  bool held_elsewhere = false;
  bool locked = false;
  std::vector<FakeRunRow> runs;
  int abandoned_marked = 0;

  Result<bool> try_lock(const TableKey&) override {
    if (held_elsewhere || locked) return false;
    locked = true;
    return true;
  }
  void unlock(const TableKey&) override { locked = false; }
  std::set<Instant> partition_locks_elsewhere;  // partitions a "backfill" holds
  std::map<Instant, std::pair<Instant, std::string>> partitions;  // lo -> (hi, status)

  Result<int> fail_abandoned_runs(const TableKey&, const std::optional<Window>& only) override {
    int n = 0;
    for (auto& r : runs) {
      if (!r.end && (!only || (r.start.window && r.start.window->lo == only->lo))) {
        r.end = RunEnd{false, std::nullopt, std::nullopt, 0, 0, "abandoned", {}};
        ++n;
      }
    }
    abandoned_marked += n;
    return n;
  }
  Result<std::optional<StoredWatermark>> read_watermark(const TableKey&) override {
    if (!watermark) return std::optional<StoredWatermark>();
    return std::optional<StoredWatermark>(StoredWatermark{*watermark});
  }
  Result<RunId> start_run(const RunStart& start) override {
    runs.push_back({start, std::nullopt});
    return static_cast<RunId>(runs.size());
  }
  Result<OpenedRun> open_run(const TableKey& table, RunTrigger trigger) override {
    const auto abandoned = fail_abandoned_runs(table, std::nullopt);
    OpenedRun out;
    out.abandoned = *abandoned;
    if (watermark) out.watermark = StoredWatermark{*watermark};
    out.run = *start_run(RunStart{table, trigger, watermark, std::nullopt});
    return out;
  }
  Status compare_and_set(const std::optional<CursorValue>& expected, const CursorValue& next) {
    if (!locked) return Error{"lock lost"};
    if (watermark != expected) return Error{"the watermark moved: another writer"};
    watermark = next;
    return ok_status();
  }
  Status move_watermark(const TableKey&, RunId, const std::optional<CursorValue>& expected,
                        const CursorValue& next) override {
    return compare_and_set(expected, next);
  }
  Status finish_run(RunId run, const RunEnd& end) override {
    runs.at(static_cast<std::size_t>(run - 1)).end = end;
    return ok_status();
  }
  std::map<SourceMicros, std::pair<std::string, std::int64_t>> samples;  // taken_at -> (source, max)
  Result<std::vector<CursorSample>> read_cursor_samples(const TableKey&, const std::string& source) override {
    std::vector<CursorSample> out;
    for (const auto& [at, entry] : samples) {
      if (entry.first == source) out.push_back(CursorSample{at, entry.second});
    }
    return out;
  }
  Status save_cursor_samples(const TableKey&, const std::string& source, std::optional<SourceMicros> forget_before,
                             const std::optional<CursorSample>& add) override {
    for (auto it = samples.begin(); it != samples.end();) {
      const bool forget = it->second.first != source || (forget_before && it->first < *forget_before);
      it = forget ? samples.erase(it) : std::next(it);
    }
    if (add) samples[add->taken_at] = {source, add->max};
    return ok_status();
  }
  Result<bool> lock_partition(const TableKey&, const TimeWindow& p, bool) override {
    return partition_locks_elsewhere.count(p.lo) == 0;
  }
  void unlock_partition(const TableKey&, const TimeWindow&) override {}
  Result<std::optional<Instant>> last_done_partition(const TableKey&) override {
    std::optional<Instant> out;
    for (const auto& [lo, entry] : partitions) {
      if (entry.second == "done") out = entry.first;
    }
    return out;
  }
  Result<std::vector<Instant>> done_partitions(const TableKey&, Instant from, Instant to) override {
    std::vector<Instant> out;
    for (const auto& [lo, entry] : partitions) {
      if (entry.second == "done" && lo >= from && lo < to) out.push_back(lo);
    }
    return out;
  }
  Status mark_partition_failed(const TableKey&, const TimeWindow& p, RunId) override {
    partitions.emplace(p.lo, std::make_pair(p.hi, std::string("failed")));
    return ok_status();
  }
};

struct FakeRow {
  std::int64_t key;
  std::int64_t cursor;
};

class FakeSource final : public Source {
 public:
  CursorType type = CursorType::Integer;
  std::vector<FakeRow> rows;
  // Integer cursors: max + 1 (else the rows' max + 1); time cursors: hi
  // when nothing is open (the clock less kStartReportMargin).
  std::optional<std::int64_t> hi;
  std::optional<OpenTransaction> open;   // the oldest open transaction
  bool sees_all_sessions = true;
  bool standby_without_primary = false;
  bool cursor_nullable = false;
  std::int64_t null_rows = 0;
  int horizon_reads = 0;
  std::string fail_with;
  Instant now{};  // the source clock, less kStartReportMargin

  Result<SourceTable> inspect(const TableConfig&) override {
    if (!fail_with.empty()) return Error{fail_with};
    return SourceTable{type, cursor_nullable, {"id", "c"}};
  }
  Result<HorizonReading> read_horizon(const TableConfig&, CursorType t) override {
    if (!fail_with.empty()) return Error{fail_with};
    HorizonReading r;
    // The clock is `now` plus the margin, so that a horizon with nothing
    // open comes out as `now` exactly.
    r.clock = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() +
              kStartReportMargin;
    r.oldest = open;
    r.sees_all_sessions = sees_all_sessions;
    r.standby_without_primary = standby_without_primary;
    if (t == CursorType::Integer) {
      if (hi) {
        r.max_cursor = *hi - 1;
      } else if (!rows.empty()) {
        std::int64_t max = rows.front().cursor;
        for (const auto& row : rows) max = std::max(max, row.cursor);
        r.max_cursor = max;
      }
    } else if (hi) {
      r.clock = *hi + kStartReportMargin;  // so that hi comes out as *hi when nothing is open
    }
    ++horizon_reads;
    return r;
  }
  Result<CursorValue> cursor_at(SourceMicros instant, CursorType t) override {
    // The fake's session time zone is UTC.
    if (t == CursorType::Date) return CursorValue{t, instant / (86'400LL * 1'000'000)};
    return CursorValue{t, instant};
  }
  Result<std::int64_t> null_cursor_rows(const TableConfig&) override { return null_rows; }
  Result<std::optional<CursorValue>> lower_bound(const TableConfig&, CursorType t) override {
    if (rows.empty()) return std::optional<CursorValue>();
    std::int64_t min = rows.front().cursor;
    for (const auto& r : rows) min = std::min(min, r.cursor);
    return std::optional<CursorValue>(CursorValue{t, min});
  }
};

class FakeTarget final : public Target {
 public:
  FakeTarget(FakeSource& source, FakeState& state) : source_(source), state_(state) {}

  std::map<std::int64_t, std::int64_t> rows;  // key -> cursor
  int fail_at_chunk = -1;                     // 0-based; -1: never
  CancelToken* cancel_after_first = nullptr;  // cancelled once the first chunk commits
  std::vector<Window> chunks;
  std::vector<TimeWindow> partitions_written;
  std::optional<Instant> fail_partition;  // lo of a partition whose write fails

  Status check(const TableConfig&, const SourceTable&) override { return ok_status(); }
  Result<ChunkCounts> load_chunk(const TableConfig&, const SourceTable&, const ChunkRequest& request) override {
    const int index = static_cast<int>(chunks.size());
    chunks.push_back(request.window);
    if (index == fail_at_chunk) return Error{"injected failure"};
    // One transaction: stage the rows, then compare-and-set; all or nothing.
    std::map<std::int64_t, std::int64_t> staged = rows;
    ChunkCounts counts;
    for (const FakeRow& r : source_.rows) {
      if (r.cursor >= request.window.lo.raw && r.cursor < request.window.hi.raw) {
        ++counts.rows_read;
        auto [it, inserted] = staged.emplace(r.key, r.cursor);
        if (inserted || it->second != r.cursor) ++counts.rows_written;
        it->second = r.cursor;
      }
    }
    if (const Status cas = state_.compare_and_set(request.watermark_before, request.watermark_after); !cas) {
      return Error{cas.error()};
    }
    rows = std::move(staged);
    if (cancel_after_first) cancel_after_first->cancel();
    return counts;
  }
  Result<ChunkCounts> write_partition(const TableConfig&, const PartitionRequest& request) override {
    if (fail_partition == request.window.lo) return Error{"injected failure"};
    partitions_written.push_back(request.window);
    state_.partitions[request.window.lo] = {request.window.hi, "done"};
    return ChunkCounts{1, 1};
  }

 private:
  FakeSource& source_;
  FakeState& state_;
};

class RecordingObserver final : public RunObserver {
 public:
  int chunks = 0;
  std::vector<RunSummary> finished;
  void on_chunk_committed(const TableKey&, const Window&, const ChunkCounts&, const CursorValue&) override {
    ++chunks;
  }
  void on_run_finished(const RunSummary& summary) override { finished.push_back(summary); }
};

// Everything a run needs, wired together; tests set the fields they care about.
struct FakeRunPorts {
  PipelineConfig pipeline;
  TableConfig table;
  FakeState state;
  FakeSource source;
  FakeTarget target{source, state};
  RecordingObserver observer;
  CancelToken cancel;
};

}  // namespace tidemark
