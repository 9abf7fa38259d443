// The mode table, row by row: what each mode takes, what the commands may
// do with it and which class runs it; the messages built from it. The
// expected values come from SPEC §2-§4 (which keys a mode's tables have,
// what reconcile, rewind, backfill and verify do with them), not from
// running the code.
#include <doctest/doctest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "core/config/config_schema.h"
#include "core/config/table_modes.h"

namespace tidemark {
namespace {

struct ModeCase {
  TableMode mode;
  const char* name;
  RunClass run;
  std::vector<const char*> required;
  std::vector<const char*> optional;
  ReconcileBy reconcile;
  bool rewind;
  BackfillBy backfill;
  VerifyBy verify;
  bool reads_past_cursor;
  bool replaces_whole_target;
  bool in_pipeline_time_zone;
  bool batches;
};

const ModeCase kModes[] = {
    {TableMode::Incremental, "incremental", RunClass::IncrementalRun, {"source_table", "key", "cursor"},
     {"columns", "lookback", "max_window", "initial", "on_schema_change", "deletes", "create_target", "inputs"},
     ReconcileBy::Keys, true, BackfillBy::Cursor, VerifyBy::Days, true, false, false, true},
    {TableMode::Partition, "partition", RunClass::PartitionRun, {"partition", "query"},
     {"initial", "lookback", "deletes", "inputs"},
     ReconcileBy::Partitions, false, BackfillBy::Partitions, VerifyBy::Partitions, false, false, true, false},
    {TableMode::Snapshot, "snapshot", RunClass::SnapshotRun, {"source_table"},
     {"columns", "key", "on_schema_change", "create_target", "ranges"}, ReconcileBy::Refused, false, BackfillBy::Refused,
     VerifyBy::Skipped, false, true, false, false},
    {TableMode::Append, "append", RunClass::IncrementalRun, {"source_table", "cursor"},
     {"columns", "max_window", "initial", "create_target", "inputs"}, ReconcileBy::Refused, false,
     BackfillBy::Refused, VerifyBy::Days, true, false, false, true},
};

bool contains(const std::vector<const char*>& keys, std::string_view key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

}  // namespace

TEST_CASE("every mode has one row, in the order of TableMode, saying what it takes and what it can be asked") {
  REQUIRE(table_modes().size() == std::size(kModes));
  for (std::size_t i = 0; i < std::size(kModes); ++i) {
    const ModeCase& c = kModes[i];
    CAPTURE(std::string(c.name));
    const TableModeSpec& m = table_mode(c.mode);
    CHECK(&m == &table_modes()[i]);
    CHECK(std::string(table_mode_name(c.mode)) == c.name);
    CHECK(m.run == c.run);
    CHECK(m.batches == c.batches);
    CHECK(m.reconcile == c.reconcile);
    CHECK(m.rewind == c.rewind);
    CHECK(m.backfill == c.backfill);
    CHECK(m.verify == c.verify);
    CHECK(m.reads_past_cursor == c.reads_past_cursor);
    CHECK(m.replaces_whole_target == c.replaces_whole_target);
    CHECK(m.in_pipeline_time_zone == c.in_pipeline_time_zone);
    REQUIRE(m.keys.size() == c.required.size() + c.optional.size());
    for (const ModeKey& k : m.keys) {
      CAPTURE(std::string(k.key));
      CHECK(contains(k.required_because.empty() ? c.optional : c.required, k.key));
    }
  }
}

TEST_CASE("a mode that refuses a command, or skips verify, says why and what to run instead") {
  for (const TableModeSpec& m : table_modes()) {
    CAPTURE(std::string(m.name));
    CHECK((m.reconcile == ReconcileBy::Refused) != m.reconcile_refused.empty());
    CHECK(m.rewind == m.rewind_refused.empty());
    CHECK((m.backfill == BackfillBy::Refused) != m.backfill_refused.empty());
    CHECK((m.verify == VerifyBy::Skipped) != m.verify_skipped.empty());
  }
}

TEST_CASE("every mode's key is a key of a table in the schema") {
  for (const std::string_view key : mode_keys()) {
    CAPTURE(std::string(key));
    const auto& keys = table_schema().keys;
    CHECK(std::any_of(keys.begin(), keys.end(), [&](const auto& spec) { return spec.key == key; }));
  }
}

TEST_CASE("a key is taken by the modes whose rows name it, and refused by the others with their reason") {
  struct Case {
    TableMode mode;
    const char* key;
    bool taken;
    std::optional<std::string> refused;
  };
  const char* const kPartitionReason = " (a partition table is replaced whole from its query)";
  const Case cases[] = {
      {TableMode::Incremental, "cursor", true, std::nullopt},
      {TableMode::Incremental, "deletes", true, std::nullopt},
      {TableMode::Incremental, "query", false, "only for mode: partition (incremental tables read source_table)"},
      {TableMode::Incremental, "partition", false, "only for mode: partition (incremental tables read source_table)"},
      {TableMode::Snapshot, "key", true, std::nullopt},
      {TableMode::Snapshot, "create_target", true, std::nullopt},
      {TableMode::Snapshot, "cursor", false,
       "only for mode: incremental or append (a snapshot run reads the whole table, no cursor)"},
      {TableMode::Snapshot, "initial", false,
       "only for mode: incremental, partition or append (a snapshot run reads the whole table, no cursor)"},
      {TableMode::Snapshot, "deletes", false,
       "only for mode: incremental or partition (a snapshot run deletes the rows gone from the source itself)"},
      {TableMode::Snapshot, "query", false, "only for mode: partition (snapshot tables read source_table)"},
      {TableMode::Partition, "initial", true, std::nullopt},
      {TableMode::Partition, "source_table", false,
       std::string("only for mode: incremental, snapshot or append") + kPartitionReason},
      {TableMode::Partition, "key", false, std::string("only for mode: incremental or snapshot") + kPartitionReason},
      {TableMode::Partition, "create_target", false,
       std::string("only for mode: incremental, snapshot or append") + kPartitionReason},
      {TableMode::Partition, "lookback", true, std::nullopt},
      {TableMode::Partition, "deletes", true, std::nullopt},
      {TableMode::Partition, "inputs", true, std::nullopt},
      {TableMode::Incremental, "inputs", true, std::nullopt},
      {TableMode::Snapshot, "inputs", false,
       "only for mode: incremental, partition or append (a snapshot run copies the whole table, with no window for "
       "an input to hold back)"},
      {TableMode::Append, "cursor", true, std::nullopt},
      {TableMode::Append, "key", false,
       "only for mode: incremental or snapshot (an append table inserts each row once, in the transaction that "
       "moves its watermark, and has no key; a table with a key is mode: incremental)"},
      {TableMode::Append, "lookback", false,
       "only for mode: incremental or partition (a row read again below the watermark would be inserted a second "
       "time; an append table's horizon must see every writer instead (pg_monitor on the source))"},
      {TableMode::Append, "query", false, "only for mode: partition (append tables read source_table)"},
      {TableMode::Snapshot, "lookback", false,
       "only for mode: incremental or partition (a snapshot run reads the whole table, no cursor)"},
      // Keys of every table are no mode's own: neither taken nor refused here.
      {TableMode::Partition, "name", false, std::nullopt},
      {TableMode::Snapshot, "schedule", false, std::nullopt},
  };
  for (const Case& c : cases) {
    CAPTURE(std::string(table_mode_name(c.mode)) + " " + c.key);
    CHECK(takes_key(c.mode, c.key) == c.taken);
    CHECK(refused_key(c.mode, c.key) == c.refused);
  }
  CHECK(reads_source_table(TableMode::Incremental));
  CHECK(reads_source_table(TableMode::Snapshot));
  CHECK(reads_source_table(TableMode::Append));
  CHECK_FALSE(reads_source_table(TableMode::Partition));
}

TEST_CASE("the reference docs name the modes that take a key, and whether they require it") {
  const std::pair<const char*, const char*> cases[] = {
      {"source_table", "incremental, snapshot and append (required)"},
      {"cursor", "incremental and append (required)"},
      {"key", "incremental (required) and snapshot"},
      {"columns", "incremental, snapshot and append"},
      {"initial", "incremental, partition and append"},
      {"query", "partition (required)"},
      {"deletes", "incremental and partition"},
      {"inputs", "incremental, partition and append"},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.first));
    CHECK(key_modes_text(c.first) == c.second);
  }
}

TEST_CASE("a mode's tables are named with their article") {
  CHECK(a_mode_table(TableMode::Snapshot) == "a snapshot table");
  CHECK(a_mode_table(TableMode::Incremental) == "an incremental table");
  CHECK(a_mode_table(TableMode::Append) == "an append table");
  CHECK(mode_refusal("tidemark rewind", TableMode::Append, table_mode(TableMode::Append).rewind_refused, "logs",
                     "events")
            .rfind("tidemark rewind: logs.events is an append table: moving its watermark back", 0) == 0);
}

TEST_CASE("a command's refusal names the table, its mode and, where it says so, the command to run") {
  const TableModeSpec& snapshot = table_mode(TableMode::Snapshot);
  CHECK(mode_refusal("tidemark backfill", TableMode::Snapshot, snapshot.backfill_refused, "shop", "countries") ==
        "tidemark backfill: shop.countries is a snapshot table: every run reads it whole; run it now with tidemark "
        "run shop --table countries");
  CHECK(mode_refusal("tidemark rewind", TableMode::Partition, table_mode(TableMode::Partition).rewind_refused, "shop",
                     "daily") == "tidemark rewind: shop.daily is a partition table; re-run its partitions with "
                                 "tidemark backfill");
  CHECK(mode_refusal("tidemark reconcile", TableMode::Snapshot, snapshot.reconcile_refused, "shop", "countries") ==
        "tidemark reconcile: shop.countries is a snapshot table: each of its runs deletes the rows gone from the "
        "source and copies the missing ones; run it now with tidemark run");
}

}  // namespace tidemark
