// The run's orchestration against in-memory ports: ordering, chunking,
// failures at each step, locks and compare-and-set, without a database.
// tests/integration/ runs the same scenarios against PostgreSQL.
#include <doctest/doctest.h>

#include <limits>

#include "core/run/cancel_token.h"
#include "core/run/incremental_run.h"
#include "fake_ports.h"

namespace tidemark {
namespace {

struct IncrementalHarness : FakeRunPorts {
  IncrementalHarness() {
    pipeline.name = "p";
    table.name = "t";
    table.cursor = "c";
    table.source_table = QualifiedName(std::nullopt, "src");
    table.key = {"id"};
  }
  RunSummary run() {
    return IncrementalRun(context()).execute(RunTrigger::Manual);
  }
  // Every source row is in the target with its latest cursor value.
  bool target_matches_source() const {
    std::map<std::int64_t, std::int64_t> expected;
    for (const FakeRow& r : source.rows) expected[r.key] = r.cursor;
    return expected == target.rows;
  }
};

CursorValue n(std::int64_t v) { return {CursorType::Integer, v}; }

}  // namespace

TEST_CASE("a first run loads the whole history and sets the watermark to hi") {
  IncrementalHarness h;
  h.source.rows = {{1, 10}, {2, 20}, {3, 30}};
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::Success);
  CHECK(s.rows_read == 3);
  CHECK(h.state.watermark == n(31));
  CHECK(h.target_matches_source());
  REQUIRE(h.state.runs.size() == 1);
  CHECK(h.state.runs[0].end->success);
  CHECK(h.state.runs[0].end->rows_written == 3);
  CHECK_FALSE(h.state.locked);  // released
  CHECK(h.observer.finished.size() == 1);
}

TEST_CASE("a row exactly at hi is read once, by the next window (half-open)") {
  IncrementalHarness h;
  h.source.rows = {{1, 10}};
  h.source.hi = 20;
  h.run();
  h.source.rows.push_back({2, 20});  // lands exactly at the old hi
  h.source.hi = 30;
  const RunSummary second = h.run();
  CHECK(second.rows_read == 1);  // only row 2; row 1 (cursor 10) is below [20, 30)
  CHECK(h.target.chunks.back().lo == n(20));
  CHECK(h.target_matches_source());
}

TEST_CASE("lookback re-reads below the watermark and picks up a late row") {
  IncrementalHarness h;
  h.table.lookback = {CursorSpan::Kind::Count, 5};
  h.source.rows = {{1, 10}, {2, 20}};
  h.source.hi = 21;
  h.run();
  // A row committed late with a cursor below the watermark (order 1008).
  h.source.rows.push_back({1008, 18});
  h.source.hi = 25;
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::Success);
  CHECK(h.target.chunks.back().lo == n(16));
  CHECK(h.target.rows.count(1008) == 1);
  CHECK(h.state.watermark == n(25));
}

TEST_CASE("an empty batch keeps the watermark or moves it to the source's hi, never to nothing") {
  IncrementalHarness h;
  h.source.rows = {{1, 10}};
  h.source.hi = 20;
  h.run();
  h.source.hi = 40;  // time passed, no new rows
  RunSummary s = h.run();
  CHECK(s.rows_read == 0);
  CHECK(h.state.watermark == n(40));
  // Integer cursor on an empty table: no hi at all, the watermark stays.
  IncrementalHarness empty;
  empty.state.watermark = n(7);
  s = empty.run();
  CHECK(s.status == RunStatus::Success);
  CHECK(empty.state.watermark == n(7));
}

TEST_CASE("a range without rows moves the watermark in one record, without a chunk or a write to the target") {
  IncrementalHarness h;
  h.table.max_window = CursorSpan{CursorSpan::Kind::Count, 5};  // would be four chunks
  h.source.rows = {{1, 10}};
  h.source.hi = 20;
  REQUIRE(h.run().status == RunStatus::Success);
  const std::size_t chunks = h.target.chunks.size();
  const int commits = h.target.commits;
  h.source.hi = 40;  // time passed, no new rows
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::Success);
  CHECK(s.chunks == 0);
  CHECK(h.target.chunks.size() == chunks);   // nothing read or written
  CHECK(h.target.commits == commits + 1);    // one record: the watermark's move
  CHECK(h.state.watermark == n(40));
  REQUIRE(s.range);
  CHECK(s.range->lo == n(20));  // the range looked at, as the run row says
  CHECK(s.range->hi == n(40));
}

TEST_CASE("a range without rows still takes the first step's columns along: a column to append is added") {
  IncrementalHarness h;
  h.table.on_schema_change = SchemaChangePolicy::AppendNewColumns;
  h.source.rows = {{1, 10}};
  REQUIRE(h.run().status == RunStatus::Success);
  h.source.catalog.push_back({"note", "text"});
  h.target.columns = std::vector<ColumnShape>{{"id", "bigint"}, {"c", "bigint"}};
  h.source.hi = 30;  // no new rows
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::Success);
  CHECK(h.target.added_columns == std::vector<ColumnShape>{{"note", "text"}});
  CHECK(h.state.loaded_columns == h.source.catalog);
}

TEST_CASE("the rows no window includes are counted by the probe, every run") {
  IncrementalHarness h;
  h.source.rows = {{1, 10}};
  h.source.null_rows = 3;
  const RunSummary s = h.run();
  CHECK(h.source.probes == 1);
  REQUIRE(s.horizon.null_cursor_rows);
  CHECK(*s.horizon.null_cursor_rows == 3);
}

TEST_CASE("a time cursor's run may share a recent reading taken after its watermark's; an integer's reads afresh") {
  IncrementalHarness h;
  h.source.type = CursorType::TimestampTz;
  h.source.hi = 50'000'000;
  REQUIRE(h.run().status == RunStatus::Success);
  h.source.hi = 60'000'000;
  REQUIRE(h.run().status == RunStatus::Success);
  REQUIRE(h.source.shared_after.size() == 2);
  CHECK(h.source.shared_after[0] == std::numeric_limits<SourceMicros>::min());  // no watermark yet: any
  CHECK(h.source.shared_after[1] == 50'000'000 + kStartReportMargin);           // a reading after the watermark's
  IncrementalHarness integer;
  integer.source.rows = {{1, 10}};
  REQUIRE(integer.run().status == RunStatus::Success);
  REQUIRE(integer.source.shared_after.size() == 1);
  CHECK_FALSE(integer.source.shared_after[0]);
}

TEST_CASE("max_window chunks commit one by one; a failure keeps what committed and the next run resumes") {
  IncrementalHarness h;
  h.table.max_window = CursorSpan{CursorSpan::Kind::Count, 10};
  for (int i = 0; i < 35; ++i) h.source.rows.push_back({i, i});
  h.target.fail_at_chunk = 2;
  RunSummary s = h.run();
  CHECK(s.status == RunStatus::Failed);
  CHECK(s.error == "injected failure");
  CHECK(s.chunks == 2);
  CHECK(h.state.watermark == n(20));  // chunks [0,10) and [10,20) committed
  CHECK(h.state.runs.back().end->error == "injected failure");

  h.target.fail_at_chunk = -1;
  s = h.run();
  CHECK(s.status == RunStatus::Success);
  CHECK(h.target.chunks[3].lo == n(20));  // resumed where it stopped
  CHECK(h.state.watermark == n(35));
  CHECK(h.target_matches_source());
}

TEST_CASE("a run skips when another holds the lock, and writes no run row") {
  IncrementalHarness h;
  h.state.held_elsewhere = true;
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::SkippedLocked);
  CHECK(h.state.runs.empty());
  CHECK(h.target.chunks.empty());
}

TEST_CASE("a run that finds a running row while holding the lock marks it abandoned first") {
  IncrementalHarness h;
  h.state.runs.push_back({RunStart{{"p", "t"}, RunTrigger::Schedule, std::nullopt}, std::nullopt});
  h.source.rows = {{1, 1}};
  h.run();
  CHECK(h.state.abandoned_marked == 1);
  CHECK(h.state.runs[0].end->error == "abandoned");
  CHECK(h.state.runs[1].end->success);
}

TEST_CASE("compare-and-set: a watermark moved by another writer fails the chunk and commits nothing") {
  IncrementalHarness h;
  h.source.rows = {{1, 10}};
  h.source.hi = 20;
  h.run();

  // A second writer moves the watermark between our read and our commit.
  h.target.before_record = [&] { h.state.watermark = n(99); };
  h.source.rows.push_back({2, 25});
  h.source.hi = 30;
  const auto before = h.target.rows;
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::Failed);
  CHECK(s.error.find("another writer") != std::string::npos);
  CHECK(h.state.watermark == n(99));  // the other writer's value stands
  CHECK(h.target.rows == before);     // nothing of ours committed
}

TEST_CASE("a stored watermark of another type fails the run with advice") {
  IncrementalHarness h;
  h.state.watermark = CursorValue{CursorType::TimestampTz, 0};
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::Failed);
  CHECK(s.error.find("tidemark rewind") != std::string::npos);
  CHECK(h.state.runs.back().end->error == s.error);  // recorded in the run row
}

TEST_CASE("a stored watermark that cannot be read fails the run permanently, its row closed, nothing written") {
  IncrementalHarness h;
  h.state.unreadable_watermark = "stored watermark of p.t: not a timestamptz: \"soon\"";
  h.source.rows = {{1, 10}};
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::Failed);
  CHECK(s.error_kind == ErrorKind::Permanent);
  CHECK(s.error == h.state.unreadable_watermark);
  REQUIRE(h.state.runs.size() == 1);
  REQUIRE(h.state.runs.back().end);  // the row does not stay `running`
  CHECK_FALSE(h.state.runs.back().end->success);
  CHECK(h.state.runs.back().end->error_kind == ErrorKind::Permanent);
  CHECK(h.target.commits == 0);
  CHECK_FALSE(h.state.locked);
}

TEST_CASE("a duration lookback on an integer cursor fails the run, recorded") {
  IncrementalHarness h;
  h.state.watermark = n(10);
  h.table.lookback = {CursorSpan::Kind::Duration, 3600};
  h.source.hi = 20;
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::Failed);
  CHECK(s.error.find("needs a count") != std::string::npos);
}

TEST_CASE("a source failure is recorded in the run row") {
  IncrementalHarness h;
  h.source.fail_with = "cannot connect to shop: timeout";
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::Failed);
  CHECK(h.state.runs.back().end->error == "cannot connect to shop: timeout");
  CHECK_FALSE(h.state.locked);
}

TEST_CASE("cancellation stops between chunks, keeping what committed") {
  IncrementalHarness h;
  h.table.max_window = CursorSpan{CursorSpan::Kind::Count, 10};
  for (int i = 0; i < 30; ++i) h.source.rows.push_back({i, i});
  h.target.cancel_after_first = &h.cancel;
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::Cancelled);
  CHECK(s.chunks == 1);
  CHECK(h.state.watermark == n(10));
  CHECK_FALSE(h.state.runs.back().end->success);
}

TEST_CASE("initial sets the first window's start") {
  IncrementalHarness h;
  h.table.initial = "15";
  h.source.rows = {{1, 10}, {2, 20}};
  h.run();
  CHECK(h.target.rows.count(1) == 0);
  CHECK(h.target.rows.count(2) == 1);
  h.table.initial = "not a number";
  h.state.watermark.reset();
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::Failed);
  CHECK(s.error.find("initial:") == 0);
}

}  // namespace tidemark

namespace tidemark {
namespace {

constexpr std::int64_t kMinute = 60'000'000;
constexpr std::int64_t kNoon = 1'790'000'000LL * 1'000'000;  // a time cursor's raw value

struct TimeHarness : IncrementalHarness {
  TimeHarness() {
    source.type = CursorType::TimestampTz;
    source.now = Instant(std::chrono::seconds(kNoon / 1'000'000));  // hi with nothing open: noon
  }
  void open_since(std::int64_t started, bool prepared = false) {
    OpenTransaction t;
    t.started = started;
    t.prepared = prepared;
    t.pid = 9;
    t.state = "idle in transaction";
    source.open = t;
  }
};

}  // namespace

TEST_CASE("regression: a past initial below an older open transaction failed the first run as ahead; it starts there") {
  TimeHarness h;
  h.table.initial = "2026-09-21T14:00:00Z";  // kNoon is 2026-09-21T14:13:20Z
  h.source.rows = {{1, kNoon - 5 * kMinute}};
  h.open_since(kNoon - 20 * kMinute);  // began before the initial
  RunSummary s = h.run();
  CHECK(s.status == RunStatus::Success);
  CHECK(s.rows_read == 0);
  // Only the initial is claimed: rows below it are not wanted, the holder's included.
  CHECK(h.state.watermark == CursorValue{CursorType::TimestampTz, kNoon - 13 * kMinute - 20'000'000});
  CHECK(s.horizon.held_by.find("pid 9") != std::string::npos);
  CHECK_FALSE(s.horizon.watermark_ahead);
  h.source.open.reset();
  s = h.run();
  CHECK(s.rows_read == 1);
  CHECK(h.state.watermark == CursorValue{CursorType::TimestampTz, kNoon});
}

TEST_CASE("regression: a watermark above an older open transaction was reported ahead with rewind advice") {
  TimeHarness h;
  h.state.watermark = CursorValue{CursorType::TimestampTz, kNoon - 10 * kMinute};
  h.open_since(kNoon - 30 * kMinute);  // e.g. seen only since pg_monitor was granted
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::Success);
  CHECK_FALSE(s.horizon.watermark_ahead);
  CHECK(s.horizon.held_by.find("rewind") == std::string::npos);
  CHECK(s.horizon.held_by.find("pid 9") != std::string::npos);
  CHECK(h.state.watermark == CursorValue{CursorType::TimestampTz, kNoon - 10 * kMinute});  // unmoved
}

TEST_CASE("a watermark ahead of the source clock itself is reported ahead") {
  TimeHarness h;
  h.state.watermark = CursorValue{CursorType::TimestampTz, kNoon + 60 * kMinute};
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::Success);
  CHECK(s.horizon.watermark_ahead);
  CHECK(h.state.watermark == CursorValue{CursorType::TimestampTz, kNoon + 60 * kMinute});
}

TEST_CASE("regression: a prepared transaction's hold understated the lag; it is the clock less the watermark") {
  TimeHarness h;
  h.state.watermark = CursorValue{CursorType::TimestampTz, kNoon - 10 * kMinute};
  h.open_since(kNoon - kMinute, /*prepared=*/true);
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::Success);
  REQUIRE(s.horizon.lag_seconds);
  CHECK(*s.horizon.lag_seconds == doctest::Approx(601.0));  // 10 min, plus the margin on the clock
}


TEST_CASE("schema drift: a column added in the source fails the run before anything is written") {
  IncrementalHarness h;
  h.source.rows = {{1, 10}};
  REQUIRE(h.run().status == RunStatus::Success);
  CHECK(h.state.loaded_columns == std::vector<ColumnShape>{{"id", "bigint"}, {"c", "bigint"}});  // the first snapshot
  const auto watermark = h.state.watermark;
  const auto commits = h.target.commits;

  h.source.catalog.push_back({"note", "text"});
  h.target.columns = std::vector<ColumnShape>{{"id", "bigint"}, {"c", "bigint"}};
  h.source.rows.push_back({2, 20});
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::Failed);
  CHECK(s.error_kind == ErrorKind::Permanent);
  CHECK(s.error == "schema drift in src: added column note text");
  CHECK(s.schema_drift == true);
  CHECK(h.target.commits == commits);  // nothing written
  CHECK(h.state.watermark == watermark);
  REQUIRE(h.state.runs.back().end);
  CHECK(h.state.runs.back().end->schema_drift == "added column note text");
  CHECK(h.state.loaded_columns->size() == 2);
}

TEST_CASE("schema drift: append_new_columns adds the new column with the first chunk, then loads it") {
  IncrementalHarness h;
  h.table.on_schema_change = SchemaChangePolicy::AppendNewColumns;
  h.source.rows = {{1, 10}};
  REQUIRE(h.run().status == RunStatus::Success);
  h.source.catalog.push_back({"note", "text"});
  h.target.columns = std::vector<ColumnShape>{{"id", "bigint"}, {"c", "bigint"}};
  h.source.rows.push_back({2, 20});
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::Success);
  CHECK(s.schema_drift == false);
  CHECK(s.appended_columns == std::vector<std::string>{"note"});
  CHECK(h.target.added_columns == std::vector<ColumnShape>{{"note", "text"}});
  CHECK(h.state.loaded_columns == h.source.catalog);  // stored with the chunk that added it
  CHECK(h.state.runs.back().end->schema_drift == "");
  CHECK(h.target_matches_source());
}

TEST_CASE("regression: append_new_columns left the appended column NULL in the rows loaded before it") {
  // The chunk that adds the column reads again from the lowest cursor (or
  // the initial, below which nothing is wanted), so that its upsert fills
  // the column in every row loaded before; later chunks read as usual.
  struct Row {
    const char* name;
    std::optional<std::string> initial;
    std::int64_t first_lo;  // the lower end of the chunk that adds the column
  };
  const Row rows[] = {
      {"from the source's lowest cursor", std::nullopt, 10},
      {"from the initial, above the lowest cursor", std::string("15"), 15},
  };
  for (const Row& row : rows) {
    const std::string name = row.name;
    CAPTURE(name);
    IncrementalHarness h;
    h.table.on_schema_change = SchemaChangePolicy::AppendNewColumns;
    h.table.initial = row.initial;
    h.source.rows = {{1, 10}, {2, 20}};
    REQUIRE(h.run().status == RunStatus::Success);
    REQUIRE(h.state.watermark == n(21));
    h.source.catalog.push_back({"note", "text"});
    h.target.columns = std::vector<ColumnShape>{{"id", "bigint"}, {"c", "bigint"}};
    h.source.rows.push_back({3, 30});
    h.target.chunks.clear();
    const RunSummary s = h.run();
    REQUIRE(s.status == RunStatus::Success);
    CHECK(s.appended_columns == std::vector<std::string>{"note"});
    REQUIRE(h.target.chunks.size() == 1);
    CHECK(h.target.chunks[0].lo == n(row.first_lo));
    CHECK(h.target.chunks[0].hi == n(31));
    CHECK(h.state.watermark == n(31));
    // Settled: the next run reads from the watermark.
    h.source.rows.push_back({4, 40});
    h.target.chunks.clear();
    REQUIRE(h.run().status == RunStatus::Success);
    REQUIRE(h.target.chunks.size() == 1);
    CHECK(h.target.chunks[0].lo == n(31));
  }
}

TEST_CASE("schema drift: a dropped column fails even with append_new_columns, and a failed load keeps the snapshot") {
  IncrementalHarness h;
  h.table.on_schema_change = SchemaChangePolicy::AppendNewColumns;
  h.source.catalog.push_back({"note", "text"});
  h.source.rows = {{1, 10}};
  REQUIRE(h.run().status == RunStatus::Success);
  h.source.catalog.pop_back();
  h.target.columns = std::vector<ColumnShape>{{"id", "bigint"}, {"c", "bigint"}, {"note", "text"}};
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::Failed);
  CHECK(s.schema_drift == true);
  CHECK(s.error.find("dropped column note") != std::string::npos);
  CHECK(h.state.loaded_columns->size() == 3);
}

TEST_CASE("schema drift: a run that stops before comparing columns says nothing about drift") {
  IncrementalHarness h;
  h.source.fail_with = "connection lost";
  const RunSummary s = h.run();
  CHECK(s.status == RunStatus::Failed);
  CHECK_FALSE(s.schema_drift);
  CHECK_FALSE(h.state.runs.back().end->schema_drift);
}

TEST_CASE("regression: hi held at an open transaction's start is lowered to what a timestamptz(3) cursor holds") {
  // The transaction began at ...38.149397 and its row's now() is stored
  // as ...38.149: a watermark of ...38.149397 passed it for good.
  TimeHarness h;
  h.source.fraction_digits = 3;
  h.source.rows = {{1, kNoon - 5 * kMinute}};
  const std::int64_t began = kNoon - kMinute + 149'397;
  h.open_since(began);
  RunSummary s = h.run();
  REQUIRE(s.status == RunStatus::Success);
  CHECK(h.state.watermark == CursorValue{CursorType::TimestampTz, kNoon - kMinute + 149'000});
  // The transaction's row, stored rounded, lands with the next run.
  h.source.rows.push_back({2, kNoon - kMinute + 149'000});
  h.source.open.reset();
  s = h.run();
  CHECK(s.rows_read == 1);
  CHECK(h.target.rows.count(2) == 1);
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("inputs: an incremental table's hi never passes its inputs' watermarks, and says which it waits for") {
  TimeHarness h;
  h.table.inputs = {TableRef{"shop", "orders", TableMode::Incremental, date::locate_zone("UTC")}};
  h.state.watermark = CursorValue{CursorType::TimestampTz, kNoon - 30 * kMinute};
  h.state.inputs = {InputState{StoredWatermark{CursorValue{CursorType::TimestampTz, kNoon - 10 * kMinute}},
                               std::nullopt}};
  h.source.rows = {{1, kNoon - 20 * kMinute}, {2, kNoon - 5 * kMinute}};
  RunSummary s = h.run();
  CHECK(s.status == RunStatus::Success);
  CHECK(h.state.watermark == CursorValue{CursorType::TimestampTz, kNoon - 10 * kMinute});
  CHECK(h.target.rows.size() == 1);  // the row the input has not passed waits
  CHECK(s.horizon.held_by == "waiting for shop.orders, at 2026-09-21T14:03:20Z");
  CHECK(s.horizon.lag_seconds == doctest::Approx(601));  // from the source's clock, a second past its horizon
  // The gauge hears how far the source alone would have let hi go; the run
  // row keeps no wait: an incremental table always trails its inputs.
  REQUIRE(h.observer.horizons.back().input_wait_seconds);
  CHECK(*h.observer.horizons.back().input_wait_seconds == 600);
  CHECK(h.observer.horizons.back().held_by == s.horizon.held_by);
  REQUIRE(h.state.runs.back().end);
  CHECK_FALSE(h.state.runs.back().end->horizon.input_wait_seconds);
  CHECK(h.state.runs.back().end->horizon.held_by == s.horizon.held_by);

  // The input moves on: so does the table, as far as its source allows.
  h.state.inputs[0].watermark->value.raw = kNoon + 10 * kMinute;
  s = h.run();
  CHECK(h.state.watermark == CursorValue{CursorType::TimestampTz, kNoon});
  CHECK(h.target.rows.size() == 2);
  CHECK_FALSE(h.observer.horizons.back().input_wait_seconds);
  CHECK(s.horizon.held_by.empty());
}

TEST_CASE("inputs: nothing is claimed before every input has loaded something; an integer cursor is refused") {
  TimeHarness h;
  h.table.inputs = {TableRef{"shop", "orders", TableMode::Incremental, date::locate_zone("UTC")}};
  h.table.initial = "2026-09-21T13:00:00Z";
  h.source.rows = {{1, kNoon - 5 * kMinute}};
  RunSummary s = h.run();
  CHECK(s.status == RunStatus::Success);
  CHECK(h.target.rows.empty());
  CHECK(s.horizon.held_by == "waiting for shop.orders, which has loaded nothing yet");

  IncrementalHarness ids;
  ids.table.inputs = h.table.inputs;
  ids.source.rows = {{1, 10}};
  s = ids.run();
  CHECK(s.status == RunStatus::Failed);
  CHECK(s.error_kind == ErrorKind::Permanent);
  CHECK(s.error == "cursor c is an integer, and its inputs bound a table by time: give the table a time cursor, or "
                   "remove its inputs");
  CHECK(ids.target.rows.empty());
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("regression: an append table's first run refuses a target that already holds rows") {
  // A renamed append table started from nothing and inserted every source
  // row a second time beside those its old name had loaded.
  IncrementalHarness h;
  h.table.mode = TableMode::Append;
  h.table.key.clear();
  h.source.rows = {{1, 10}, {2, 20}};
  h.target.held_rows = true;
  const RunSummary refused = h.run();
  CHECK(refused.status == RunStatus::Failed);
  CHECK(refused.error.find("already holds rows") != std::string::npos);
  CHECK(refused.error.find("TRUNCATE") != std::string::npos);
  CHECK_FALSE(h.state.watermark);
  CHECK(h.target.rows.empty());

  // With initial: the operator said where the rows it holds end.
  h.table.initial = "15";
  const RunSummary loaded = h.run();
  CHECK(loaded.status == RunStatus::Success);
  CHECK(h.state.watermark == n(21));
  CHECK(loaded.rows_read == 1);

  // Runs after the first load beside the rows it inserted.
  h.table.initial.reset();
  h.source.rows.push_back({3, 30});
  CHECK(h.run().status == RunStatus::Success);
}

TEST_CASE("an append table's first run into an empty target loads, as an incremental one does") {
  IncrementalHarness h;
  h.table.mode = TableMode::Append;
  h.table.key.clear();
  h.source.rows = {{1, 10}, {2, 20}};
  CHECK(h.run().status == RunStatus::Success);
  CHECK(h.state.watermark == n(21));
}

}  // namespace tidemark
