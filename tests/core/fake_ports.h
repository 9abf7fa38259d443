// In-memory stand-ins for the run ports: a state store with a watermark,
// locks and run rows, a source of (key, cursor) rows, and a target whose
// unit of work stages rows and records and lands them together on commit,
// failing where a test asks it to. They implement the ports, not the
// rules: when to commit is core's decision.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/run/cancel_token.h"
#include "core/run/run_context.h"
#include "core/run/run_observer.h"
#include "core/run/run_ports.h"

namespace tidemark {

struct FakeRunRow {
  RunStart start;
  std::optional<RunEnd> end;
};

inline RunEnd abandoned_end() {
  RunEnd end;
  end.error = "abandoned";
  return end;
}

class FakeState final : public StateStore {
 public:
  std::optional<CursorValue> watermark;
  bool watermark_snapshot = false;  // written by a snapshot run (StoredWatermark::snapshot)
  bool held_elsewhere = false;
  bool locked = false;
  std::vector<FakeRunRow> runs;
  int abandoned_marked = 0;
  std::set<Instant> partition_locks_elsewhere;  // partitions a "backfill" holds
  std::set<Instant> partition_locks;            // partitions this run holds
  std::map<Instant, std::pair<Instant, std::string>> partitions;  // lo -> (hi, status)
  std::optional<std::vector<ColumnShape>> loaded_columns;  // the columns the table loads
  std::optional<SnapshotHorizon> snapshot_horizon;

  Result<bool> lock(const RunLock& lock, bool) override {
    if (lock.partition) {
      if (partition_locks_elsewhere.count(lock.partition->lo) || partition_locks.count(lock.partition->lo)) {
        return false;
      }
      partition_locks.insert(lock.partition->lo);
      return true;
    }
    if (held_elsewhere || locked) return false;
    locked = true;
    return true;
  }
  void unlock(const RunLock& lock) override {
    if (lock.partition) {
      partition_locks.erase(lock.partition->lo);
    } else {
      locked = false;
    }
  }
  bool holds(const RunLock& lock) const {
    return lock.partition ? partition_locks.count(lock.partition->lo) > 0 : locked;
  }
  std::string fail_open;  // open_run fails with this, when set
  std::string unreadable_watermark;  // open_run opens the row but cannot read the watermark, saying this
  Result<OpenedRun> open_run(const RunStart& start) override {
    if (!fail_open.empty()) return Error{fail_open};
    OpenedRun out;
    for (auto& r : runs) {
      if (!r.end && (!start.window || (r.start.window && r.start.window->lo == start.window->lo))) {
        r.end = abandoned_end();
        ++out.abandoned;
      }
    }
    abandoned_marked += out.abandoned;
    if (!unreadable_watermark.empty()) {
      out.unreadable_watermark = unreadable_watermark;
    } else if (watermark) {
      out.watermark = StoredWatermark{*watermark, watermark_snapshot};
    }
    if (!start.window) out.loaded_columns = loaded_columns;
    if (!start.window) out.snapshot_horizon = snapshot_horizon;
    runs.push_back({start, std::nullopt});
    out.run = static_cast<RunId>(runs.size());
    return out;
  }
  std::string fail_finish;  // finish_run fails with this, when set
  Status finish_run(RunId run, const RunEnd& end) override {
    if (!fail_finish.empty()) return Error{fail_finish};
    runs.at(static_cast<std::size_t>(run - 1)).end = end;
    return ok_status();
  }
  Result<std::vector<bool>> try_lock_all(const std::vector<RunLock>& locks) override {
    std::vector<bool> out;
    for (const RunLock& l : locks) out.push_back(*lock(l, false));
    return out;
  }
  void unlock_all(const std::vector<RunLock>& locks) override {
    for (const RunLock& l : locks) unlock(l);
  }
  SourceMicros read_at = 0;  // the state's clock, as read_tables reads it
  Result<TablesRead> read_tables(const std::vector<TableKey>& tables) override {
    if (!fail_open.empty()) return Error{fail_open};
    TablesRead out;
    out.at = read_at;
    for (std::size_t i = 0; i < tables.size(); ++i) {
      OpenedRun table;
      if (!unreadable_watermark.empty()) {
        table.unreadable_watermark = unreadable_watermark;
      } else if (watermark) {
        table.watermark = StoredWatermark{*watermark, watermark_snapshot};
      }
      table.loaded_columns = loaded_columns;
      table.snapshot_horizon = snapshot_horizon;
      out.tables.push_back(table);
    }
    return out;
  }
  std::vector<QuietRun> quiet_runs;  // every quiet run written, as asked
  Result<std::vector<QuietRunRecorded>> record_quiet_runs(const std::vector<QuietRun>& asked) override {
    std::vector<QuietRunRecorded> out;
    for (const QuietRun& q : asked) {
      // The compare-and-set, under the lock, as StepRecord's.
      if (!locked || (q.move && (!q.move->expected || watermark != q.move->expected))) {
        out.emplace_back();
        continue;
      }
      for (auto& r : runs) {
        if (!r.end) {
          r.end = abandoned_end();
          ++abandoned_marked;
        }
      }
      if (q.move) watermark = q.move->next;
      runs.push_back({q.start, q.end});
      quiet_runs.push_back(q);
      out.push_back(QuietRunRecorded{true, static_cast<RunId>(runs.size())});
    }
    return out;
  }
  Result<std::optional<StoredWatermark>> read_watermark(const TableKey&) override {
    if (!fail_open.empty()) return Error{fail_open};
    if (!watermark) return std::optional<StoredWatermark>();
    return std::optional<StoredWatermark>(StoredWatermark{*watermark, watermark_snapshot});
  }
  std::map<SourceMicros, std::pair<std::string, std::int64_t>> samples;  // taken_at -> (source, max)
  Result<std::vector<CursorSample>> read_cursor_samples(const TableKey&, const std::string& source) override {
    std::vector<CursorSample> out;
    for (const auto& [at, entry] : samples) {
      if (entry.first == source) out.push_back(CursorSample{at, entry.second});
    }
    return out;
  }
  // The latest run's change count, its unseen part 0 after a successful reconcile.
  Result<std::optional<ChangeCount>> last_change_count(const TableKey&) override {
    for (auto r = runs.rbegin(); r != runs.rend(); ++r) {
      if (!r->end) continue;
      if (r->start.trigger == RunTrigger::Reconcile && r->end->success) {
        for (auto before = r; before != runs.rend(); ++before) {
          if (before->end && before->end->changes) return std::optional<ChangeCount>(ChangeCount{before->end->changes->counted, 0});
        }
        return std::optional<ChangeCount>();
      }
      if (r->end->changes) return std::optional<ChangeCount>(r->end->changes);
    }
    return std::optional<ChangeCount>();
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
  std::map<Instant, std::string> flags;  // done partitions to check again: lo -> why
  Result<std::vector<FlaggedPartition>> flagged_partitions(const TableKey&) override {
    std::vector<FlaggedPartition> out;
    for (const auto& [lo, because] : flags) {
      const auto p = partitions.find(lo);
      if (p != partitions.end() && p->second.second == "done") out.push_back({TimeWindow{lo, p->second.first}, because});
    }
    return out;
  }
  int flags_cleared = 0;
  Status clear_flag(const TableKey&, const FlaggedPartition& flag) override {
    flags_cleared += static_cast<int>(flags.erase(flag.window.lo));
    return ok_status();
  }
  std::vector<DownstreamRecheck> downstream;  // every flagging of other tables
  Status flag_downstream(const DownstreamRecheck& recheck) override {
    downstream.push_back(recheck);
    return ok_status();
  }
  // What read_inputs answers, in the order asked; how often it was asked;
  // the count of changes of this table's inputs (InputsRead::changes).
  std::vector<InputState> inputs;
  std::int64_t input_changes = 0;
  std::string fail_inputs;
  int inputs_read = 0;
  // Called as read_inputs answers: a test plays an input that changes then.
  std::function<void()> after_inputs_read;
  Result<InputsRead> read_inputs(const TableKey&, const std::vector<TableRef>& asked) override {
    ++inputs_read;
    if (!fail_inputs.empty()) return Error{fail_inputs};
    InputsRead out{inputs, input_changes};
    out.inputs.resize(asked.size());
    if (after_inputs_read) after_inputs_read();
    return out;
  }
  Result<RunId> record_run(const RunStart& start, const RunEnd& end) override {
    runs.push_back({start, end});
    return static_cast<RunId>(runs.size());
  }
  std::vector<TableKey> announced;
  void announce_moved(const TableKey& table) override { announced.push_back(table); }
  // A ranged first load's ranges, as the state holds them.
  std::vector<LoadRange> ranges;
  int ranges_planned = 0;
  int ranges_read = 0;
  Result<std::vector<LoadRange>> load_ranges(const TableKey&) override {
    ++ranges_read;
    return ranges;
  }
  Status plan_load_ranges(const TableKey&, RunId, const std::vector<PageRange>& planned) override {
    ++ranges_planned;
    ranges.clear();
    for (std::size_t i = 0; i < planned.size(); ++i) ranges.push_back({static_cast<int>(i), planned[i], false});
    return ok_status();
  }
};

struct FakeRow {
  std::int64_t key;
  std::int64_t cursor;
  std::int64_t page = 0;  // where the row lies, for a ranged first load
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
  int fraction_digits = 6;  // of a timestamp cursor
  std::int64_t null_rows = 0;
  int horizon_reads = 0;
  int probes = 0;
  std::vector<std::optional<SourceMicros>> shared_after;  // as each horizon read was asked
  std::string fail_with;
  Instant now{};  // the source clock, less kStartReportMargin

  // Every source column with its type.
  std::vector<ColumnShape> catalog{{"id", "bigint", true, /*not_null=*/true}, {"c", "bigint", true}};
  Result<SourceTable> inspect(const TableConfig& table) override {
    if (!fail_with.empty()) return Error{fail_with};
    SourceTable out;
    out.cursor_type = type;
    out.cursor_fraction_digits = fraction_digits;
    out.catalog = catalog;
    out.cursor_insert_only = insert_only_cursor;
    if (table.columns.empty()) {
      for (const ColumnShape& c : catalog) out.columns.push_back(c.name);
    } else {
      out.columns = table.columns;
    }
    return out;
  }
  Result<HorizonReading> read_horizon(const TableConfig&, CursorType t,
                                      std::optional<SourceMicros> shared) override {
    if (!fail_with.empty()) return Error{fail_with};
    shared_after.push_back(shared);
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
  Result<WindowProbe> probe(const TableConfig&, const SourceTable&, const std::optional<Window>& range) override {
    if (!fail_with.empty()) return Error{fail_with};
    ++probes;
    WindowProbe out;
    out.null_cursor_rows = null_rows;
    if (range) {
      out.has_rows = std::any_of(rows.begin(), rows.end(),
                                 [&](const FakeRow& r) { return !(r.cursor < range->lo.raw) && r.cursor < range->hi.raw; });
    }
    return out;
  }
  // What count_changes answers; the cursor is an identity (inspect) when set.
  std::optional<std::int64_t> changes;
  bool insert_only_cursor = false;
  int changes_counted = 0;
  Result<std::optional<std::int64_t>> count_changes(const TableConfig&) override {
    ++changes_counted;
    return changes;
  }
  // The table's size (measure); nothing: not read by ranges.
  std::optional<TableExtent> extent;
  bool may_lock = true;  // open_snapshot holds one
  int snapshots_opened = 0;
  bool snapshot_open = false;
  int measured = 0;
  Result<std::optional<TableExtent>> measure(const TableConfig&, const SourceTable&) override {
    ++measured;
    return extent;
  }
  Result<std::optional<HeldSnapshot>> open_snapshot(const TableConfig&, const SourceTable&) override {
    if (!fail_with.empty()) return Error{fail_with};
    if (!may_lock) return std::optional<HeldSnapshot>();
    if (snapshot_open) std::abort();  // one held snapshot at a time
    ++snapshots_opened;
    snapshot_open = true;
    HeldSnapshot held;
    held.taken_at = CursorValue{CursorType::TimestampTz,
                                std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count()};
    held.source_xmin = 500;
    return std::optional<HeldSnapshot>(held);
  }
  void close_snapshot() override { snapshot_open = false; }
  Result<std::optional<CursorValue>> lower_bound(const TableConfig&, CursorType t) override {
    if (rows.empty()) return std::optional<CursorValue>();
    std::int64_t min = rows.front().cursor;
    for (const auto& r : rows) min = std::min(min, r.cursor);
    return std::optional<CursorValue>(CursorValue{t, min});
  }
};

// A unit of work over the fakes: rows and records are staged and land
// together on commit, as in one transaction. record() is the port's
// compare-and-set primitive and nothing more; what to do with its outcome
// is core's rule, which the tests check.
class FakeUnitOfWork;

class FakeTarget final : public Target {
 public:
  FakeTarget(FakeSource& source, FakeState& state) : source_(source), state_(state) {}

  std::map<std::int64_t, std::int64_t> rows;  // key -> cursor
  int fail_at_chunk = -1;                     // 0-based; -1: never
  CancelToken* cancel_after_first = nullptr;  // cancelled once the first chunk commits
  std::vector<Window> chunks;
  // Each snapshot's hint (replace_table's `since`), and the horizon the
  // next snapshot leaves: the fake's snapshots count up from 100.
  std::vector<std::optional<SnapshotHorizon>> snapshot_hints;
  std::int64_t next_horizon = 100;
  std::vector<TimeWindow> partitions_written;
  std::optional<Instant> fail_partition;  // lo of a partition whose write fails
  // Called between a step's write and its record: a test plays another
  // writer or a lost session there.
  std::function<void()> before_record;
  int commits = 0;

  // The target's columns; nothing: the source's catalog (a target made like it).
  std::optional<std::vector<ColumnShape>> columns;
  // Its unique indexes; nothing: a primary key on the table's key.
  std::optional<std::vector<UniqueIndex>> unique_indexes;
  std::vector<ColumnShape> added_columns;  // by committed units of work
  bool missing = false;      // the target table does not exist; a committed create_table makes it
  std::string fail_create;   // create_table fails with this
  int created = 0;           // tables created by committed units of work
  Result<TargetTable> check(const TableConfig& table) override {
    TargetTable out;
    if (missing) {
      if (!table.create_target) return permanent_error("target table does not exist");
      out.exists = false;
      return out;
    }
    out.columns = columns ? *columns : source_.catalog;
    if (unique_indexes) {
      out.unique_indexes = *unique_indexes;
    } else {
      UniqueIndex pk;
      pk.name = "t_pkey";
      pk.columns = table.key;
      out.unique_indexes.push_back(pk);
    }
    return out;
  }
  // Whether the target holds rows before any unit of work wrote some.
  bool held_rows = false;
  int holds_rows_asked = 0;
  Result<bool> holds_rows(const TableConfig&) override {
    ++holds_rows_asked;
    return held_rows || !rows.empty();
  }
  std::unique_ptr<UnitOfWork> begin(const RunLock& lock) override;
  int helpers_awaited = 0;
  Status await_range_helpers(const RunLock&) override {
    ++helpers_awaited;
    return ok_status();
  }
  // What compare_partition finds: equal unless a partition's lo is here.
  std::map<Instant, PartitionComparison> differing;
  std::vector<TimeWindow> compared;
  std::string fail_compare;
  Result<PartitionComparison> compare_partition(const TableConfig&, const PartitionRequest& request) override {
    compared.push_back(request.window);
    if (!fail_compare.empty()) return Error{fail_compare};
    const auto it = differing.find(request.window.lo);
    return it == differing.end() ? PartitionComparison{1, 1, true} : it->second;
  }
  std::vector<RunLock> begun;  // the lock each unit of work was begun under
  std::string fail_commit;     // commit() fails with this, landing nothing
  int unrecorded_commits = 0;  // commits asked without a written record: a broken rule
  std::vector<ReconcileFix> fixes;  // every reconcile batch asked of a unit of work
  std::string fail_reconcile;       // UnitOfWork::reconcile fails with this
  std::vector<StepRecord> records;  // every record committed
  std::vector<std::pair<PageRange, bool>> ranges_written;  // each range asked, and whether straight

 private:
  friend class FakeUnitOfWork;
  FakeSource& source_;
  FakeState& state_;
};

class FakeUnitOfWork final : public UnitOfWork {
 public:
  explicit FakeUnitOfWork(FakeTarget& target) : target_(target), staged_(target.rows) {}

  Status create_table(const TableConfig&, const SourceTable& source) override {
    if (!target_.fail_create.empty()) return Error{target_.fail_create};
    creating_ = source.catalog;
    return ok_status();
  }
  Status add_columns(const TableConfig&, const std::vector<ColumnShape>& columns) override {
    adding_ = columns;
    return ok_status();
  }
  Result<ChunkCounts> write_chunk(const TableConfig&, const SourceTable&, const Window& window) override {
    const int index = static_cast<int>(target_.chunks.size());
    target_.chunks.push_back(window);
    if (index == target_.fail_at_chunk) return Error{"injected failure"};
    ChunkCounts counts;
    for (const FakeRow& r : target_.source_.rows) {
      if (r.cursor >= window.lo.raw && r.cursor < window.hi.raw) {
        ++counts.rows_read;
        auto [it, inserted] = staged_.emplace(r.key, r.cursor);
        if (inserted || it->second != r.cursor) ++counts.rows_written;
        it->second = r.cursor;
      }
    }
    return counts;
  }
  // The source's rows become the target's, at the source's clock (`now`).
  Result<SnapshotWrite> replace_table(const TableConfig&, const SourceTable&,
                                      const std::optional<SnapshotHorizon>& since) override {
    const int index = static_cast<int>(target_.chunks.size());
    target_.chunks.push_back(Window{});
    target_.snapshot_hints.push_back(since);
    if (index == target_.fail_at_chunk) return Error{"injected failure"};
    SnapshotWrite out;
    out.horizon = SnapshotHorizon{target_.next_horizon, target_.next_horizon + 1};
    target_.next_horizon += 10;
    std::map<std::int64_t, std::int64_t> next;
    for (const FakeRow& r : target_.source_.rows) {
      ++out.counts.rows_read;
      next[r.key] = r.cursor;
      const auto it = staged_.find(r.key);
      if (it == staged_.end() || it->second != r.cursor) ++out.counts.rows_written;
    }
    for (const auto& [key, cursor] : staged_) {
      if (next.count(key) == 0) ++out.deleted;
    }
    out.counts.rows_written += out.deleted;
    staged_ = std::move(next);
    out.taken_at = CursorValue{CursorType::TimestampTz,
                               std::chrono::duration_cast<std::chrono::microseconds>(
                                   target_.source_.now.time_since_epoch())
                                   .count()};
    return out;
  }
  // The source rows on `pages`: straight in, failing on a key the target
  // holds (as COPY into a primary key does), or upserted.
  Result<RangeWrite> write_range(const TableConfig&, const SourceTable&, const PageRange& pages,
                                 bool straight) override {
    if (!target_.source_.snapshot_open) std::abort();  // a range is read in the held snapshot
    const int index = static_cast<int>(target_.chunks.size());
    target_.chunks.push_back(Window{});
    target_.ranges_written.push_back({pages, straight});
    if (index == target_.fail_at_chunk) return Error{"injected failure"};
    RangeWrite out;
    for (const FakeRow& r : target_.source_.rows) {
      if (r.page < pages.first || (pages.end && r.page >= *pages.end)) continue;
      ++out.counts.rows_read;
      const auto it = staged_.find(r.key);
      if (straight && it != staged_.end()) return Error{"duplicate key " + std::to_string(r.key)};
      if (it == staged_.end() || it->second != r.cursor) ++out.counts.rows_written;
      staged_[r.key] = r.cursor;
    }
    out.target_after = target_.next_horizon++;
    return out;
  }
  Result<ChunkCounts> replace_partition(const TableConfig&, const PartitionRequest& request) override {
    if (target_.fail_partition == request.window.lo) return Error{"injected failure"};
    partition_ = request.window;
    return ChunkCounts{1, 1};
  }
  // Deletes the gone keys and copies the recopied ones from the source
  // (keys and cursors are the key rows' first column and the source rows).
  Result<ReconcileWrite> reconcile(const TableConfig&, const SourceTable&, const ReconcileFix& fix) override {
    target_.fixes.push_back(fix);
    if (!target_.fail_reconcile.empty()) return Error{target_.fail_reconcile};
    ReconcileWrite out;
    for (const KeyRow& k : fix.gone) {
      out.deleted += static_cast<std::int64_t>(staged_.erase(std::stoll(*k.columns.at(0))));
    }
    for (const KeyRow& k : fix.recopy) {
      for (const FakeRow& r : target_.source_.rows) {
        if (r.key == std::stoll(*k.columns.at(0)) && r.cursor < fix.watermark.raw) {
          staged_[r.key] = r.cursor;
          ++out.copied.rows_read;
          ++out.copied.rows_written;
        }
      }
    }
    return out;
  }
  Result<StepRecorded> record(const StepRecord& record) override {
    if (target_.before_record) target_.before_record();
    StepRecorded out;
    out.lock_held = target_.state_.holds(record.lock);
    if (!out.lock_held) return out;
    // As the state store's statement: the value and its kind (a snapshot's
    // time or a cursor's value) must both be as expected.
    const FakeState& state = target_.state_;
    if (record.move && (state.watermark != record.move->expected ||
                        (state.watermark && state.watermark_snapshot != record.move->snapshot))) {
      out.found = target_.state_.watermark;
      return out;
    }
    out.written = true;
    record_ = record;
    return out;
  }
  Status commit() override {
    if (!record_) {
      ++target_.unrecorded_commits;
      return Error{"nothing recorded"};
    }
    if (!target_.fail_commit.empty()) return Error{target_.fail_commit};
    FakeState& state = target_.state_;
    target_.rows = std::move(staged_);
    if (record_->move) {
      state.watermark = record_->move->next;
      state.watermark_snapshot = record_->move->snapshot;
    }
    if (record_->loaded_columns) state.loaded_columns = record_->loaded_columns;
    if (record_->snapshot_horizon) state.snapshot_horizon = record_->snapshot_horizon;
    if (record_->range_done) state.ranges.at(static_cast<std::size_t>(*record_->range_done)).done = true;
    if (record_->ranges_finished) state.ranges.clear();
    if (creating_) {
      target_.missing = false;
      target_.columns = *creating_;
      ++target_.created;
    }
    if (!adding_.empty()) {
      std::vector<ColumnShape> now = target_.columns ? *target_.columns : target_.source_.catalog;
      for (const ColumnShape& c : adding_) now.push_back(c);
      target_.columns = now;
      target_.added_columns.insert(target_.added_columns.end(), adding_.begin(), adding_.end());
    }
    if (record_->partition_done && partition_) {
      target_.partitions_written.push_back(*partition_);
      state.partitions[partition_->lo] = {partition_->hi, "done"};
      // As the state store's record: the flag cleared, unless the inputs
      // changed since the write read them.
      if (record_->input_changes_seen && *record_->input_changes_seen != state.input_changes) {
        state.flags[partition_->lo] = "an input changed while it was written";
      } else {
        state.flags.erase(partition_->lo);
      }
      // A rewrite leaves the query's rows: no longer differing.
      target_.differing.erase(partition_->lo);
    }
    if (record_->recheck) state.downstream.push_back(*record_->recheck);
    ++target_.commits;
    target_.records.push_back(*record_);
    if (target_.cancel_after_first) target_.cancel_after_first->cancel();
    return ok_status();
  }

 private:
  FakeTarget& target_;
  std::map<std::int64_t, std::int64_t> staged_;
  std::optional<TimeWindow> partition_;
  std::optional<StepRecord> record_;
  std::vector<ColumnShape> adding_;
  std::optional<std::vector<ColumnShape>> creating_;
};

inline std::unique_ptr<UnitOfWork> FakeTarget::begin(const RunLock& lock) {
  begun.push_back(lock);
  return std::make_unique<FakeUnitOfWork>(*this);
}

class RecordingObserver final : public RunObserver {
 public:
  int chunks = 0;
  std::vector<RunSummary> finished;
  void on_chunk_committed(const TableKey&, const Window&, const ChunkCounts&, const CursorValue&) override {
    ++chunks;
  }
  void on_run_finished(const RunSummary& summary) override { finished.push_back(summary); }
  std::vector<HorizonReport> horizons;  // each as a run decided it
  void on_horizon(const TableKey&, const HorizonReport& horizon) override { horizons.push_back(horizon); }
  std::vector<std::pair<int, int>> ranges;  // each range committed: done, of all
  void on_range_committed(const TableKey&, const LoadRange&, int done, int all, const ChunkCounts&) override {
    ranges.emplace_back(done, all);
  }
};

// A fleet's answer to whether this process owns a table: every table but
// the ones given away. Counts the questions, and those asked while
// `locked` (when given) said the table's lock was not held.
class FakeOwnership final : public TableOwnership {
 public:
  explicit FakeOwnership(std::function<bool(const TableKey&)> locked = nullptr) : locked_(std::move(locked)) {}
  std::set<TableKey> given_away;
  mutable int asked = 0;
  mutable int asked_unlocked = 0;
  bool owns(const TableKey& table) const override {
    ++asked;
    if (locked_ && !locked_(table)) ++asked_unlocked;
    return given_away.count(table) == 0;
  }

 private:
  std::function<bool(const TableKey&)> locked_;
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

  RangeCrew* crew = nullptr;  // none: the run reads its ranges alone
  RunContext context() {
    return RunContext{pipeline, table, state, source, target, observer, cancel, sole_owner(), crew};
  }
};

}  // namespace tidemark
