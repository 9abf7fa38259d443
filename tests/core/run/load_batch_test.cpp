// A batch of loads against in-memory ports, one set per table behind
// ports that route by table as one database would serve them all: what is
// done at once, what is handed back to run on its own, and that every lock
// taken is released on every path.
#include <doctest/doctest.h>

#include <map>
#include <memory>

#include "core/run/incremental_run.h"
#include "core/run/load_batch.h"
#include "fake_ports.h"

namespace tidemark {
namespace {

CursorValue at(std::int64_t micros) { return {CursorType::TimestampTz, micros}; }

// One table's own fakes, loaded once on their own (so it has a watermark
// and loaded columns) unless `first_run` is false.
struct OneTable : FakeRunPorts {
  explicit OneTable(const std::string& name) {
    pipeline.name = "p";
    table.name = name;
    table.cursor = "c";
    table.source_table = QualifiedName(std::nullopt, "src_" + name);
    table.target_table = QualifiedName(std::nullopt, "dst_" + name);
    table.key = {"id"};
    source.type = CursorType::TimestampTz;
    source.hi = 1'000;
    source.rows = {{1, 500}};
  }
  void first_run() {
    REQUIRE(IncrementalRun(context()).execute(RunTrigger::Schedule).status == RunStatus::Success);
  }
};

// The ports of one database serving every table's: each call goes to the
// table's own fakes.
class RoutedState final : public StateStore {
 public:
  explicit RoutedState(std::map<std::string, std::unique_ptr<OneTable>>& tables) : tables_(tables) {}
  int lock_calls = 0;
  int reads = 0;
  int records = 0;
  std::function<void()> before_record;  // another writer, or a lost lock, between read and record

  Result<bool> lock(const RunLock&, bool) override { return Error{"a batch locks all at once"}; }
  void unlock(const RunLock& l) override { of(l.table).unlock(l); }
  Result<OpenedRun> open_run(const RunStart&) override { return Error{"a batch opens no row"}; }
  Status finish_run(RunId, const RunEnd&) override { return Error{"a batch opens no row"}; }
  Result<std::optional<StoredWatermark>> read_watermark(const TableKey& t) override { return of(t).read_watermark(t); }
  Result<std::vector<CursorSample>> read_cursor_samples(const TableKey& t, const std::string& s) override {
    return of(t).read_cursor_samples(t, s);
  }
  Result<std::optional<ChangeCount>> last_change_count(const TableKey& t) override { return of(t).last_change_count(t); }
  Status save_cursor_samples(const TableKey& t, const std::string& s, std::optional<SourceMicros> before,
                             const std::optional<CursorSample>& add) override {
    return of(t).save_cursor_samples(t, s, before, add);
  }
  Result<std::optional<Instant>> last_done_partition(const TableKey&) override { return Error{"unused"}; }
  Result<std::vector<Instant>> done_partitions(const TableKey&, Instant, Instant) override { return Error{"unused"}; }
  Status mark_partition_failed(const TableKey&, const TimeWindow&, RunId) override { return Error{"unused"}; }
  Result<std::vector<FlaggedPartition>> flagged_partitions(const TableKey&) override { return Error{"unused"}; }
  Status clear_flag(const TableKey&, const FlaggedPartition&) override { return Error{"unused"}; }
  Status flag_downstream(const DownstreamRecheck&) override { return Error{"unused"}; }
  Result<InputsRead> read_inputs(const TableKey&, const std::vector<TableRef>&) override { return Error{"unused"}; }
  Result<RunId> record_run(const RunStart&, const RunEnd&) override { return Error{"unused"}; }
  Result<std::vector<LoadRange>> load_ranges(const TableKey&) override { return Error{"unused"}; }
  Status plan_load_ranges(const TableKey&, RunId, const std::vector<PageRange>&) override { return Error{"unused"}; }
  std::vector<TableKey> announced;
  void announce_moved(const TableKey& t) override { announced.push_back(t); }

  Result<std::vector<bool>> try_lock_all(const std::vector<RunLock>& locks) override {
    ++lock_calls;
    std::vector<bool> out;
    for (const RunLock& l : locks) out.push_back((*of(l.table).try_lock_all({l}))[0]);
    return out;
  }
  void unlock_all(const std::vector<RunLock>& locks) override {
    for (const RunLock& l : locks) of(l.table).unlock(l);
  }
  Result<TablesRead> read_tables(const std::vector<TableKey>& tables) override {
    ++reads;
    TablesRead out;
    out.at = 42;
    for (const TableKey& t : tables) {
      auto one = of(t).read_tables({t});
      if (!one) return one.failure();
      out.tables.push_back(one->tables[0]);
    }
    return out;
  }
  Result<std::vector<QuietRunRecorded>> record_quiet_runs(const std::vector<QuietRun>& runs) override {
    ++records;
    if (before_record) before_record();
    std::vector<QuietRunRecorded> out;
    for (const QuietRun& q : runs) out.push_back((*of(q.start.table).record_quiet_runs({q}))[0]);
    return out;
  }

 private:
  FakeState& of(const TableKey& t) { return tables_.at(t.table)->state; }
  std::map<std::string, std::unique_ptr<OneTable>>& tables_;
};

class RoutedSource final : public Source {
 public:
  explicit RoutedSource(std::map<std::string, std::unique_ptr<OneTable>>& tables) : tables_(tables) {}
  int probe_calls = 0;
  std::function<void()> on_probe;

  Result<SourceTable> inspect(const TableConfig& t) override { return of(t).inspect(t); }
  Result<HorizonReading> read_horizon(const TableConfig& t, CursorType type,
                                      std::optional<SourceMicros> shared_after) override {
    return of(t).read_horizon(t, type, shared_after);
  }
  Result<CursorValue> cursor_at(SourceMicros instant, CursorType type) override {
    return tables_.begin()->second->source.cursor_at(instant, type);
  }
  Result<std::optional<CursorValue>> lower_bound(const TableConfig& t, CursorType type) override {
    return of(t).lower_bound(t, type);
  }
  Result<WindowProbe> probe(const TableConfig& t, const SourceTable& s, const std::optional<Window>& range) override {
    if (t.name == fail_probe_of) return Error{"permission denied for table src_" + t.name};
    return of(t).probe(t, s, range);
  }
  Result<std::optional<std::int64_t>> count_changes(const TableConfig& t) override { return of(t).count_changes(t); }
  Result<std::optional<TableExtent>> measure(const TableConfig&, const SourceTable&) override {
    return Error{"unused"};
  }
  Result<std::optional<HeldSnapshot>> open_snapshot(const TableConfig&, const SourceTable&) override {
    return Error{"unused"};
  }
  void close_snapshot() override {}
  std::vector<Result<WindowProbe>> probe_all(const std::vector<ProbeAsk>& asks) override {
    ++probe_calls;
    if (on_probe) on_probe();
    return Source::probe_all(asks);
  }
  std::string fail_probe_of;  // this table's look fails

 private:
  FakeSource& of(const TableConfig& t) { return tables_.at(t.name)->source; }
  std::map<std::string, std::unique_ptr<OneTable>>& tables_;
};

class RoutedTarget final : public Target {
 public:
  explicit RoutedTarget(std::map<std::string, std::unique_ptr<OneTable>>& tables) : tables_(tables) {}
  Result<TargetTable> check(const TableConfig& t) override { return tables_.at(t.name)->target.check(t); }
  std::unique_ptr<UnitOfWork> begin(const RunLock& lock) override {
    ++begun;
    return tables_.at(lock.table.table)->target.begin(lock);
  }
  int begun = 0;  // a batch writes nothing to the target
  Result<PartitionComparison> compare_partition(const TableConfig&, const PartitionRequest&) override {
    return Error{"unused"};
  }
  Result<bool> holds_rows(const TableConfig&) override { return Error{"unused"}; }
  Status await_range_helpers(const RunLock&) override { return Error{"unused"}; }

 private:
  std::map<std::string, std::unique_ptr<OneTable>>& tables_;
};

struct Batch {
  std::map<std::string, std::unique_ptr<OneTable>> tables;
  PipelineConfig pipeline;
  RoutedState state{tables};
  RoutedSource source{tables};
  RoutedTarget target{tables};
  RecordingObserver observer;
  CancelToken cancel;
  FakeOwnership ownership{[this](const TableKey& t) { return tables.at(t.table)->state.locked; }};

  explicit Batch(const std::vector<std::string>& names) {
    pipeline.name = "p";
    for (const std::string& n : names) {
      tables[n] = std::make_unique<OneTable>(n);
      pipeline.tables.push_back(tables[n]->table);
    }
  }
  OneTable& operator[](const std::string& name) { return *tables.at(name); }
  std::vector<std::optional<RunSummary>> run(const std::vector<std::string>& names) {
    std::vector<BatchMember> members;
    for (const std::string& n : names) {
      members.push_back(BatchMember{&tables.at(n)->table, RunTrigger::Schedule, Instant(std::chrono::seconds(60))});
    }
    return LoadBatch(pipeline, state, source, target, observer, cancel, ownership).execute(members);
  }
  bool none_locked() const {
    for (const auto& [name, t] : tables) {
      if (t->state.locked) return false;
    }
    return true;
  }
};

}  // namespace

TEST_CASE("tables with nothing new finish in the batch, their watermarks moved; the others are handed back") {
  Batch b({"quiet", "busy", "new"});
  b["quiet"].first_run();
  b["busy"].first_run();
  // Then, while the clock goes from 1000 to 2000: busy gets a row, new never ran.
  for (const char* name : {"quiet", "busy", "new"}) b[name].source.hi = 2'000;
  b["busy"].source.rows.push_back({2, 1'500});
  b["new"].source.rows = {{1, 100}};

  const auto out = b.run({"quiet", "busy", "new"});
  REQUIRE(out.size() == 3);
  REQUIRE(out[0]);
  CHECK(out[0]->status == RunStatus::Success);
  CHECK(out[0]->watermark_before == at(1'000));
  CHECK(out[0]->watermark_after == at(2'000));
  REQUIRE(out[0]->range);
  CHECK(out[0]->range->lo == at(1'000));
  CHECK(out[0]->range->hi == at(2'000));
  CHECK(out[0]->rows_read == 0);
  CHECK(b["quiet"].state.watermark == at(2'000));
  REQUIRE(b["quiet"].state.quiet_runs.size() == 1);
  const QuietRun& recorded = b["quiet"].state.quiet_runs[0];
  CHECK(recorded.start.trigger == RunTrigger::Schedule);
  CHECK(recorded.scheduled == Instant(std::chrono::seconds(60)));
  CHECK(recorded.started == 42);
  CHECK(recorded.end.success);
  CHECK(recorded.end.watermark_after == at(2'000));
  CHECK(out[0]->run == static_cast<RunId>(b["quiet"].state.runs.size()));
  // Rows to load, or a first run: each its own run, as without the batch.
  CHECK_FALSE(out[1]);
  CHECK_FALSE(out[2]);
  CHECK(b["busy"].state.watermark == at(1'000));
  CHECK(b["busy"].state.quiet_runs.empty());
  CHECK_FALSE(b["new"].state.watermark);
  CHECK(b["new"].source.probes == 0);  // not asked: no watermark, it runs on its own
  // One round trip for each step of the batch, and nothing written to a target.
  CHECK(b.state.lock_calls == 1);
  CHECK(b.state.reads == 1);
  CHECK(b.source.probe_calls == 1);
  CHECK(b.state.records == 1);
  CHECK(b.target.begun == 0);
  CHECK(b.none_locked());
  REQUIRE(b.observer.finished.size() == 1);
  CHECK(b.observer.finished[0].table.table == "quiet");
  // The busy table's own run then loads its row.
  CHECK(IncrementalRun(b["busy"].context()).execute(RunTrigger::Schedule).rows_read == 1);
}

TEST_CASE("a table this member no longer owns once the batch holds its lock is let go and skipped, as its own run would be") {
  Batch b({"a", "b"});
  b["a"].first_run();
  b["b"].first_run();
  b.ownership.given_away.insert(TableKey{"p", "a"});
  const int probes_before = b["a"].source.probes;
  const auto out = b.run({"a", "b"});
  REQUIRE(out[0]);
  CHECK(out[0]->status == RunStatus::SkippedLocked);
  CHECK(out[0]->run == 0);
  CHECK(b["a"].state.quiet_runs.empty());
  CHECK(b["a"].state.watermark == at(1'000));
  CHECK(b["a"].source.probes == probes_before);  // not asked: another member runs it
  REQUIRE(out[1]);
  CHECK(out[1]->status == RunStatus::Success);
  CHECK(b.ownership.asked == 2);
  CHECK(b.ownership.asked_unlocked == 0);  // asked under each lock, as a run of its own asks
  CHECK(b.none_locked());
}

TEST_CASE("a table whose lock is held elsewhere is skipped in the batch, as its own run would be") {
  Batch b({"a", "b"});
  b["a"].first_run();
  b["b"].first_run();
  b["a"].state.held_elsewhere = true;
  const auto out = b.run({"a", "b"});
  REQUIRE(out[0]);
  CHECK(out[0]->status == RunStatus::SkippedLocked);
  CHECK(out[0]->run == 0);
  CHECK(b["a"].state.quiet_runs.empty());
  REQUIRE(out[1]);
  CHECK(out[1]->status == RunStatus::Success);
  CHECK(b.observer.finished.size() == 2);
  CHECK(b.none_locked());
}

TEST_CASE("a watermark moved between the batch's read and its record is not recorded: the run is handed back") {
  Batch b({"a", "b"});
  b["a"].first_run();
  b["b"].first_run();
  for (const char* name : {"a", "b"}) b[name].source.hi = 2'000;
  b.state.before_record = [&] { b["a"].state.watermark = at(1'500); };  // another writer
  const auto out = b.run({"a", "b"});
  CHECK_FALSE(out[0]);
  CHECK(b["a"].state.watermark == at(1'500));  // not overwritten
  CHECK(b["a"].state.quiet_runs.empty());
  REQUIRE(out[1]);
  CHECK(b["b"].state.watermark == at(2'000));
  CHECK(b.none_locked());
}

TEST_CASE("a run whose lock was lost before the batch recorded it is not recorded: it is handed back") {
  Batch b({"a", "b"});
  b["a"].first_run();
  b["b"].first_run();
  for (const char* name : {"a", "b"}) b[name].source.hi = 2'000;
  b.state.before_record = [&] { b["a"].state.locked = false; };  // its session gone, and the lock with it
  const auto out = b.run({"a", "b"});
  CHECK_FALSE(out[0]);
  CHECK(b["a"].state.watermark == at(1'000));
  REQUIRE(out[1]);
  CHECK(out[1]->status == RunStatus::Success);
}

TEST_CASE("a table whose look at the source fails is handed back alone; the others finish") {
  Batch b({"a", "b"});
  b["a"].first_run();
  b["b"].first_run();
  for (const char* name : {"a", "b"}) b[name].source.hi = 2'000;
  b.source.fail_probe_of = "a";
  const auto out = b.run({"a", "b"});
  CHECK_FALSE(out[0]);
  REQUIRE(out[1]);
  CHECK(b["b"].state.watermark == at(2'000));
  CHECK(b.none_locked());
}

TEST_CASE("a table whose watermark is a snapshot's or unreadable is handed back: its own run fails it, saying why") {
  Batch b({"snap", "bad", "ok"});
  for (const char* name : {"snap", "bad", "ok"}) b[name].first_run();
  b["snap"].state.watermark_snapshot = true;
  b["bad"].state.unreadable_watermark = "stored watermark of p.bad: not a timestamptz";
  const int looked = b["snap"].source.probes + b["bad"].source.probes;
  const auto out = b.run({"snap", "bad", "ok"});
  CHECK_FALSE(out[0]);
  CHECK_FALSE(out[1]);
  REQUIRE(out[2]);
  CHECK(b["snap"].source.probes + b["bad"].source.probes == looked);  // neither was looked at
  CHECK(b.none_locked());
}

TEST_CASE("a batch that cannot read the state, or is cancelled, hands every run back with every lock released") {
  Batch b({"a", "b"});
  b["a"].first_run();
  b["b"].first_run();
  SUBCASE("the state cannot be read") {
    b["b"].state.fail_open = "state database gone";
    const auto out = b.run({"a", "b"});
    CHECK_FALSE(out[0]);
    CHECK_FALSE(out[1]);
    CHECK(b.source.probe_calls == 0);
  }
  SUBCASE("cancelled while the source is asked") {
    b.source.on_probe = [&] { b.cancel.cancel(); };
    const auto out = b.run({"a", "b"});
    CHECK_FALSE(out[0]);
    CHECK_FALSE(out[1]);
    CHECK(b.state.records == 0);
  }
  CHECK(b.none_locked());
  CHECK(b.observer.finished.empty());
  CHECK(b["a"].state.watermark == at(1'000));
}

TEST_CASE("a table whose horizon stayed where its watermark is finishes in the batch, its watermark unmoved") {
  Batch b({"a"});
  b["a"].first_run();
  const auto out = b.run({"a"});  // the source's clock still at 1000: an empty range
  REQUIRE(out[0]);
  CHECK(out[0]->status == RunStatus::Success);
  CHECK(out[0]->watermark_after == at(1'000));
  REQUIRE(b["a"].state.quiet_runs.size() == 1);
  CHECK_FALSE(b["a"].state.quiet_runs[0].move);
}

TEST_CASE("a table whose columns drifted is handed back: its own run fails it and says how") {
  Batch b({"a"});
  b["a"].first_run();
  b["a"].source.catalog.push_back({"extra", "text", true});
  b["a"].source.hi = 2'000;
  const auto out = b.run({"a"});
  CHECK_FALSE(out[0]);
  CHECK(b["a"].state.quiet_runs.empty());
  CHECK(b.none_locked());
}

}  // namespace tidemark
