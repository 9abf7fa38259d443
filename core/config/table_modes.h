// The table modes, one row each: the keys a mode's tables take (which of
// them it requires, and why), what the commands may do with its tables,
// and the run class that loads them. The configuration's schema, the
// commands, the scheduler and the runner read this table instead of
// telling the modes apart themselves. Constant rows built once on first
// use; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tidemark {

// incremental: rows newer than the watermark, by cursor; partition: a
// query's rows, one time partition at a time; snapshot: the whole table,
// made equal to one source snapshot each run; append: rows past an
// insert-only cursor, inserted once each into a target without a key.
enum class TableMode { Incremental, Partition, Snapshot, Append };

// The class in core/run that carries out a table's runs (run_table in
// core/run/table_run.h starts it).
enum class RunClass { IncrementalRun, PartitionRun, SnapshotRun };

// How `tidemark reconcile` compares a table with its source.
enum class ReconcileBy {
  Keys,        // the row diff on `key` under the table's lock (ReconcileRun); `deletes:` schedules it
  Partitions,  // each done partition against what its query returns now; those that differ rewritten (PartitionRepair)
  Refused,
};

// How `tidemark backfill` reads a range again.
enum class BackfillBy {
  Cursor,      // a cursor range, without moving the watermark (CursorBackfill)
  Partitions,  // the partitions in the range, N at a time (PartitionBackfill)
  Refused,
};

// How `tidemark verify` compares a table with its source.
enum class VerifyBy {
  Days,        // counts and a checksum per day of the lookback window
  Partitions,  // the most recent done partitions against their query
  Skipped,     // nothing to compare day by day; said, and not a failure
};

// A key a mode's tables take beyond those every table takes.
struct ModeKey {
  std::string_view key;
  std::string_view required_because;  // empty: optional
};

// A key of other modes that this mode refuses with a reason of its own.
struct RefusedKey {
  std::string_view key;
  std::string_view because;
};

struct TableModeSpec {
  TableMode mode = TableMode::Incremental;
  const char* name = "";       // as the configuration spells it
  std::string_view loads;      // how a run loads the table, for the reference docs
  std::vector<ModeKey> keys;   // its own keys; every other mode's key is refused
  std::string_view refuses_because;  // why, unless `refuses` names the key
  std::vector<RefusedKey> refuses;

  RunClass run = RunClass::IncrementalRun;
  // Its runs read rows past a cursor below the source's safe horizon: a
  // lookback of 0s needs a horizon that sees every writer, and a cursor
  // that cannot see updates is watched for them.
  bool reads_past_cursor = false;
  // Each run makes the whole target table equal to its source, which
  // would delete the rows of any other table loading into it.
  bool replaces_whole_target = false;
  // Its sessions work in the pipeline's time zone: its query's bounds are
  // that zone's local days and hours.
  bool in_pipeline_time_zone = false;
  // Its rows are inserted once and never written again: an update or a
  // delete the source counts on its table is one the target never sees,
  // whatever the cursor (core/run/change_watch.h).
  bool inserts_only = false;
  // Its rows and its watermark must commit in one transaction: its
  // target must be the state connection (a retry after a commit of one
  // side only would insert its rows again).
  bool needs_state_in_target = false;
  // Its loads that wait together may run as one batch
  // (core/run/load_batch.h), which does at once the runs that find
  // nothing new.
  bool batches = false;

  // What the commands may do with its tables. A refusal or a skip says
  // why after "<pipeline>.<table> is a <mode> table", where {pipeline}
  // and {table} stand for the names.
  ReconcileBy reconcile = ReconcileBy::Refused;
  std::string_view reconcile_refused;
  bool rewind = false;
  std::string_view rewind_refused;
  BackfillBy backfill = BackfillBy::Refused;
  std::string_view backfill_refused;
  VerifyBy verify = VerifyBy::Skipped;
  std::string_view verify_skipped;
};

// Every mode, in the order of TableMode.
const std::vector<TableModeSpec>& table_modes();
const TableModeSpec& table_mode(TableMode mode);

// "incremental", "partition" or "snapshot", as the configuration spells it.
const char* table_mode_name(TableMode mode);

// "an append table", "a snapshot table": the mode's name with its article.
std::string a_mode_table(TableMode mode);

// Every mode's own keys, each once, in the order of the rows.
const std::vector<std::string_view>& mode_keys();

// Whether `mode`'s tables take `key`, one of mode_keys().
bool takes_key(TableMode mode, std::string_view key);

// Incremental, snapshot and append tables read a source table; a
// partition table runs a query.
bool reads_source_table(TableMode mode);

// The modes that take `key`, for the reference docs: "incremental and
// snapshot (required)", "incremental (required) and snapshot" when only
// the first requires it.
std::string key_modes_text(std::string_view key);

// Why a table of `mode` cannot have `key`: "only for mode: incremental or
// snapshot (a partition table ...)". Nothing when it takes the key or the
// key is no mode's own.
std::optional<std::string> refused_key(TableMode mode, std::string_view key);

// What `command` says when it refuses (or skips) `pipeline`.`table` for
// its mode: "<command>: <pipeline>.<table> is a(n) <mode> table<why>", with
// {pipeline} and {table} in `why` replaced by the names.
std::string mode_refusal(std::string_view command, TableMode mode, std::string_view why, const std::string& pipeline,
                         const std::string& table);

}  // namespace tidemark
