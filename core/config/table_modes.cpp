#include "core/config/table_modes.h"

#include <algorithm>
#include <cstdlib>

namespace tidemark {
namespace {

TableModeSpec incremental() {
  TableModeSpec m;
  m.mode = TableMode::Incremental;
  m.name = "incremental";
  m.loads = "rows past a cursor";
  m.keys = {
      {"source_table", "an incremental table reads from a source table"},
      {"columns", ""},
      {"key", "an incremental table upserts on its key columns"},
      {"cursor", "an incremental table needs a cursor column to read changes by"},
      {"lookback", ""},
      {"max_window", ""},
      {"initial", ""},
      {"on_schema_change", ""},
      {"deletes", ""},
      {"create_target", ""},
      {"inputs", ""},
  };
  m.refuses_because = "incremental tables read source_table";
  m.run = RunClass::IncrementalRun;
  m.reads_past_cursor = true;
  m.batches = true;
  m.reconcile = ReconcileBy::Keys;
  m.rewind = true;
  m.backfill = BackfillBy::Cursor;
  m.verify = VerifyBy::Days;
  return m;
}

TableModeSpec partition() {
  TableModeSpec m;
  m.mode = TableMode::Partition;
  m.name = "partition";
  m.loads = "a query per time partition";
  m.keys = {
      {"partition", "a partition table needs partition: {column, unit}"},
      {"query", "a partition table is defined by a query over $1 (lo) and $2 (hi)"},
      {"initial", ""},
      {"lookback", ""},
      {"deletes", ""},
      {"inputs", ""},
  };
  m.refuses_because = "a partition table is replaced whole from its query";
  m.run = RunClass::PartitionRun;
  m.in_pipeline_time_zone = true;
  m.reconcile = ReconcileBy::Partitions;
  m.rewind_refused = "; re-run its partitions with tidemark backfill";
  m.backfill = BackfillBy::Partitions;
  m.verify = VerifyBy::Partitions;
  return m;
}

TableModeSpec snapshot() {
  TableModeSpec m;
  m.mode = TableMode::Snapshot;
  m.name = "snapshot";
  m.loads = "the whole table made equal to one source snapshot each run (for tables without a cursor)";
  m.keys = {
      {"source_table", "a snapshot table reads a source table whole"},
      {"columns", ""},
      {"key", ""},
      {"on_schema_change", ""},
      {"create_target", ""},
      {"ranges", ""},
  };
  m.refuses_because = "a snapshot run reads the whole table, no cursor";
  m.refuses = {
      {"partition", "snapshot tables read source_table"},
      {"query", "snapshot tables read source_table"},
      {"deletes", "a snapshot run deletes the rows gone from the source itself"},
      {"inputs", "a snapshot run copies the whole table, with no window for an input to hold back"},
  };
  m.run = RunClass::SnapshotRun;
  m.replaces_whole_target = true;
  m.reconcile_refused =
      ": each of its runs deletes the rows gone from the source and copies the missing ones; run it now with "
      "tidemark run";
  m.rewind_refused =
      ": every run reads it whole, whatever its watermark (the time of its last snapshot); run it now with "
      "tidemark run";
  m.backfill_refused = ": every run reads it whole; run it now with tidemark run {pipeline} --table {table}";
  m.verify_skipped = "each run makes its target equal to the source";
  return m;
}

TableModeSpec append() {
  TableModeSpec m;
  m.mode = TableMode::Append;
  m.name = "append";
  m.loads = "rows past an insert-only cursor, each inserted once (for tables without a key)";
  m.keys = {
      {"source_table", "an append table reads from a source table"},
      {"columns", ""},
      {"cursor", "an append table inserts the rows past its cursor"},
      {"max_window", ""},
      {"initial", ""},
      {"create_target", ""},
      {"inputs", ""},
  };
  m.refuses_because = "append tables read source_table";
  m.refuses = {
      {"key",
       "an append table inserts each row once, in the transaction that moves its watermark, and has no key; a table "
       "with a key is mode: incremental"},
      {"lookback",
       "a row read again below the watermark would be inserted a second time; an append table's horizon must see "
       "every writer instead (pg_monitor on the source)"},
      {"deletes",
       "an append table's rows are never updated or deleted; what the source changes is counted as unseen changes"},
      {"on_schema_change",
       "a column added later could not be filled in the rows already inserted, which have no key to be found by"},
  };
  m.run = RunClass::IncrementalRun;
  m.reads_past_cursor = true;
  m.inserts_only = true;
  m.needs_state_in_target = true;
  m.batches = true;
  m.reconcile_refused =
      ": its rows have no key to be told apart by; tidemark verify compares each day's rows as multisets";
  m.rewind_refused =
      ": moving its watermark back would insert the rows above it a second time; to load it again from the start, "
      "empty its target table and give the table a new name";
  m.backfill_refused =
      ": reading a range again would insert its rows a second time; tidemark verify compares each day's rows";
  m.verify = VerifyBy::Days;
  return m;
}

const ModeKey* find_key(const TableModeSpec& mode, std::string_view key) {
  const auto it = std::find_if(mode.keys.begin(), mode.keys.end(), [&](const ModeKey& k) { return k.key == key; });
  return it == mode.keys.end() ? nullptr : &*it;
}

// "a", "a or b", "a, b or c"; `last` is the word before the last one.
std::string join_names(const std::vector<std::string>& names, const char* last) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? std::string(" ") + last + " " : ", ";
    out += names[i];
  }
  return out;
}

void replace_all(std::string& text, std::string_view from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

}  // namespace

const std::vector<TableModeSpec>& table_modes() {
  static const std::vector<TableModeSpec> modes{incremental(), partition(), snapshot(), append()};
  return modes;
}

const TableModeSpec& table_mode(TableMode mode) {
  for (const TableModeSpec& m : table_modes()) {
    if (m.mode == mode) return m;
  }
  std::abort();  // every TableMode has its row
}

const char* table_mode_name(TableMode mode) { return table_mode(mode).name; }

std::string a_mode_table(TableMode mode) {
  const std::string name = table_mode_name(mode);
  const bool vowel = std::string_view("aeiou").find(name.front()) != std::string_view::npos;
  return (vowel ? "an " : "a ") + name + " table";
}

const std::vector<std::string_view>& mode_keys() {
  static const std::vector<std::string_view> keys = [] {
    std::vector<std::string_view> out;
    for (const TableModeSpec& m : table_modes()) {
      for (const ModeKey& k : m.keys) {
        if (std::find(out.begin(), out.end(), k.key) == out.end()) out.push_back(k.key);
      }
    }
    return out;
  }();
  return keys;
}

bool takes_key(TableMode mode, std::string_view key) { return find_key(table_mode(mode), key) != nullptr; }

bool reads_source_table(TableMode mode) { return takes_key(mode, "source_table"); }

std::string key_modes_text(std::string_view key) {
  std::vector<std::pair<std::string, bool>> takers;  // name, required
  for (const TableModeSpec& m : table_modes()) {
    if (const ModeKey* k = find_key(m, key)) takers.emplace_back(m.name, !k->required_because.empty());
  }
  const bool all_require =
      !takers.empty() && std::all_of(takers.begin(), takers.end(), [](const auto& t) { return t.second; });
  std::vector<std::string> names;
  for (const auto& [name, required] : takers) names.push_back(name + (required && !all_require ? " (required)" : ""));
  return join_names(names, "and") + (all_require ? " (required)" : "");
}

std::optional<std::string> refused_key(TableMode mode, std::string_view key) {
  const TableModeSpec& refusing = table_mode(mode);
  if (find_key(refusing, key) != nullptr) return std::nullopt;
  std::vector<std::string> takers;
  for (const TableModeSpec& m : table_modes()) {
    if (find_key(m, key) != nullptr) takers.push_back(m.name);
  }
  if (takers.empty()) return std::nullopt;
  std::string_view because = refusing.refuses_because;
  for (const RefusedKey& r : refusing.refuses) {
    if (r.key == key) because = r.because;
  }
  return "only for mode: " + join_names(takers, "or") + (because.empty() ? "" : " (" + std::string(because) + ")");
}

std::string mode_refusal(std::string_view command, TableMode mode, std::string_view why, const std::string& pipeline,
                         const std::string& table) {
  std::string tail(why);
  replace_all(tail, "{pipeline}", pipeline);
  replace_all(tail, "{table}", table);
  return std::string(command) + ": " + pipeline + "." + table + " is " + a_mode_table(mode) + tail;
}

}  // namespace tidemark
