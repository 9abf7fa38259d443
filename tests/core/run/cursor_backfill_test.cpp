// A cursor backfill against in-memory ports: what it asks of the tables
// built from the one it copies again (flags and a wake-up), chunk by chunk.
#include <doctest/doctest.h>

#include "core/run/cursor_backfill.h"
#include "core/time/partition_calendar.h"
#include "fake_ports.h"

namespace tidemark {
namespace {

struct CursorBackfillHarness : FakeRunPorts {
  CursorBackfillHarness() {
    pipeline.name = "shop";
    pipeline.zone = date::locate_zone("UTC");
    table.name = "orders";
    table.key = {"id"};
    table.max_window = CursorSpan{CursorSpan::Kind::Count, 10};  // [0, 30) in three chunks
    table.dependents = {TableRef{"marts", "daily", TableMode::Partition, nullptr},
                        TableRef{"marts", "lines", TableMode::Incremental, nullptr}};
  }
  RunSummary backfill() { return CursorBackfill(context()).execute("0", "30"); }
};

}  // namespace

TEST_CASE("a cursor backfill of an input flags its partition dependents' done partitions with every chunk it wrote") {
  CursorBackfillHarness h;
  h.source.rows = {{1, 5}, {2, 25}};  // the middle chunk, [10, 20), writes nothing
  const RunSummary s = h.backfill();
  REQUIRE(s.status == RunStatus::Success);
  CHECK(s.rows_written == 2);
  // Which of a mart's days read the rows the cursor does not tell: all of
  // them, in each writing chunk's transaction.
  REQUIRE(h.state.downstream.size() == 2);
  for (const DownstreamRecheck& flagged : h.state.downstream) {
    CHECK(flagged.tables == std::vector<TableKey>{TableKey{"marts", "daily"}});
    CHECK(flagged.from == kCalendarStart);
    CHECK(flagged.because == "input shop.orders backfilled from 0 to 30");
  }
  CHECK(h.state.announced == std::vector<TableKey>{TableKey{"shop", "orders"}});
  CHECK_FALSE(h.state.watermark);  // a backfill still never moves it
}

TEST_CASE("a cursor backfill that wrote nothing flags nothing and wakes no one") {
  CursorBackfillHarness h;
  const RunSummary s = h.backfill();
  REQUIRE(s.status == RunStatus::Success);
  CHECK(h.state.downstream.empty());
  CHECK(h.state.announced.empty());
}

TEST_CASE("a cursor backfill of a table nothing is built from flags nothing and wakes no one") {
  CursorBackfillHarness h;
  h.table.dependents.clear();
  h.source.rows = {{1, 5}};
  REQUIRE(h.backfill().status == RunStatus::Success);
  CHECK(h.state.downstream.empty());
  CHECK(h.state.announced.empty());
}

}  // namespace tidemark
