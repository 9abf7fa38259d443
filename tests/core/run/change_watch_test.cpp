// The watch on changes a cursor cannot see: which tables are watched, how
// counts add up between runs (as a table of cases), and what a run records.
#include <doctest/doctest.h>

#include "core/run/change_watch.h"
#include "core/run/incremental_run.h"
#include "fake_ports.h"

namespace tidemark {
namespace {

struct CountCase {
  const char* name;
  std::optional<ChangeCount> previous;
  std::int64_t counted;
  ChangeCount expected;
};

struct ChangeWatchHarness : FakeRunPorts {
  ChangeWatchHarness() {
    pipeline.name = "p";
    table.name = "t";
    table.cursor = "id";
    table.source_table = QualifiedName(std::nullopt, "src");
    table.key = {"id"};
    source.insert_only_cursor = true;
    source.rows = {{1, 1}, {2, 2}};
  }
  RunSummary run() { return IncrementalRun(context()).execute(RunTrigger::Manual); }
};

}  // namespace

TEST_CASE("unseen changes add up between runs, and a reset of the statistics counts what they count since") {
  const CountCase cases[] = {
      {"first run: nothing unseen yet", std::nullopt, 40, {40, 0}},
      {"no change since", ChangeCount{40, 0}, 40, {40, 0}},
      {"grew: the growth is unseen", ChangeCount{40, 0}, 47, {47, 7}},
      {"adds to what was unseen before", ChangeCount{47, 7}, 50, {50, 10}},
      {"after a reconcile: from 0 again", ChangeCount{50, 0}, 52, {52, 2}},
      {"statistics reset: what they count since", ChangeCount{50, 10}, 3, {3, 13}},
  };
  for (const CountCase& c : cases) {
    CAPTURE(std::string(c.name));
    const ChangeCount next = next_change_count(c.previous, c.counted);
    CHECK(next.counted == c.expected.counted);
    CHECK(next.unseen == c.expected.unseen);
  }
}

TEST_CASE("watched: an incremental table with an insert-only cursor and no scheduled reconcile") {
  TableConfig table;
  table.mode = TableMode::Incremental;
  SourceTable identity;
  identity.cursor_insert_only = true;
  CHECK(watches_changes(table, identity));
  CHECK_FALSE(watches_changes(table, SourceTable{}));  // a stamped cursor sees its changes
  TableConfig reconciled = table;
  reconciled.deletes = DeletesConfig{};
  CHECK_FALSE(watches_changes(reconciled, identity));  // its reconcile repairs them
  TableConfig snapshot = table;
  snapshot.mode = TableMode::Snapshot;
  CHECK_FALSE(watches_changes(snapshot, identity));
}

TEST_CASE("each run of a watched table records the count and what grew since the previous run") {
  ChangeWatchHarness h;
  h.source.changes = 100;
  RunSummary first = h.run();
  REQUIRE(first.status == RunStatus::Success);
  REQUIRE(first.changes);
  CHECK(first.changes->unseen == 0);
  h.source.changes = 130;  // 30 updates and deletes since
  const RunSummary second = h.run();
  REQUIRE(second.changes);
  CHECK(second.changes->counted == 130);
  CHECK(second.changes->unseen == 30);
  REQUIRE(h.state.runs.back().end->changes);
  CHECK(h.state.runs.back().end->changes->unseen == 30);
  // A failed run still counts what it saw: the next one adds to it.
  h.source.changes = 131;
  h.target.fail_commit = "target gone";
  h.source.rows.push_back({3, 3});
  CHECK(h.run().status == RunStatus::Failed);
  h.target.fail_commit.clear();
  CHECK(h.run().changes->unseen == 31);
}

TEST_CASE("a successful reconcile clears what was unseen; a table that is not watched never asks") {
  ChangeWatchHarness h;
  h.source.changes = 10;
  h.run();
  h.source.changes = 15;
  CHECK(h.run().changes->unseen == 5);
  RunStart reconcile;
  reconcile.trigger = RunTrigger::Reconcile;
  RunEnd clean;
  clean.success = true;
  h.state.runs.push_back({reconcile, clean});
  h.source.changes = 16;
  CHECK(h.run().changes->unseen == 1);

  ChangeWatchHarness stamped;
  stamped.source.insert_only_cursor = false;
  stamped.source.changes = 10;
  CHECK_FALSE(stamped.run().changes);
  CHECK(stamped.source.changes_counted == 0);
  // A source without statistics for the table (a view): nothing recorded.
  ChangeWatchHarness view;
  CHECK_FALSE(view.run().changes);
  CHECK(view.source.changes_counted == 1);
}

}  // namespace tidemark
