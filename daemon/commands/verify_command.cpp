#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <optional>
#include <ostream>

#include "core/config/table_modes.h"
#include "core/diff/row_diff.h"
#include "core/run/cancel_token.h"
#include "core/run/partition_writer.h"
#include "core/sql/row_hash_statements.h"
#include "core/sql/verify_statements.h"
#include "core/text/sql_identifier.h"
#include "core/time/partition_calendar.h"
#include "daemon/commands/command_support.h"
#include "daemon/commands/commands.h"
#include "daemon/commands/exit_code.h"
#include "daemon/commands/interrupt_scope.h"
#include "daemon/commands/partition_backfill.h"
#include "daemon/commands/partition_compare.h"
#include "daemon/pg/data/partition_bounds.h"
#include "daemon/pg/data/pg_key_side.h"
#include "daemon/pg/data/pg_row_hash_stream.h"
#include "daemon/pg/data/pg_source.h"
#include "daemon/pg/state/pg_state_store.h"

namespace tidemark {
namespace {

struct Bucket {
  std::int64_t rows = 0;
  std::string checksum = "0";
};

std::map<std::string, Bucket> buckets(PgConnection& c, const std::string& sql) {
  std::map<std::string, Bucket> out;
  const PgResult r = c.exec(sql);
  for (int i = 0; i < r.rows(); ++i) out[r.text(i, 0)] = Bucket{r.integer(i, 1), r.text(i, 2)};
  return out;
}

// The window verify compares: the lookback below the watermark, or one day
// (a thousand values for integer cursors) when the lookback is zero.
Result<Window> verify_window(const CursorValue& watermark, const CursorSpan& lookback) {
  CursorSpan span = lookback;
  if (span.is_zero()) {
    span = watermark.type == CursorType::Integer ? CursorSpan{CursorSpan::Kind::Count, 1000}
                                                 : CursorSpan{CursorSpan::Kind::Duration, 86400};
  }
  const auto lo = cursor_minus(watermark, span);
  if (!lo) return lo.failure();
  return Window{*lo, watermark};
}

// Each loaded column with its type on both sides, as the row diff hashes
// it: a column the target lacks has an empty target type.
std::vector<FingerprintColumn> hashed_columns(PgConnection& target, const TableConfig& table,
                                              const SourceTable& source) {
  const PgResult types = target.exec(
      "SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a WHERE a.attrelid = $1::regclass"
      " AND a.attnum > 0 AND NOT a.attisdropped",
      {table.target_table.quoted()});
  std::vector<ColumnShape> in_target;
  for (int i = 0; i < types.rows(); ++i) in_target.push_back(ColumnShape{types.text(i, 0), types.text(i, 1)});
  return fingerprint_columns(source.columns, source.catalog, in_target);
}

// Both sides' streams of `statements` (`counted`: each entry stands for
// its count of rows), merged in a read-only transaction a side under the
// diff's plan settings; collecting stops past `most` differences, the
// counts stay whole. Throws on a failure.
RowDiff diff_sides(PgConnection& source, PgConnection& target, const RowHashStatements& statements, bool counted,
                   std::size_t most) {
  CancelToken interrupt;
  const InterruptScope interrupt_scope(interrupt);
  for (PgConnection* side : {&source, &target}) {
    side->exec("BEGIN READ ONLY");
    side->exec(kRowDiffPlanSettings);
  }
  auto diffed = [&] {
    PgRowHashStream from_source(source, statements.source, statements.order, interrupt, counted);
    PgRowHashStream from_target(target, statements.target, statements.order, interrupt, counted);
    return diff_rows(from_source, from_target, statements.order,
                     RowDiffLimits{static_cast<std::int64_t>(most), std::size_t{16} << 20});
  }();
  for (PgConnection* side : {&source, &target}) side->rollback_quietly();
  if (!diffed) throw std::runtime_error(diffed.error());
  return std::move(*diffed);
}

// Names the first `most` keys that differ between the sides among the
// rows of one bucket: both sides' (key, row hash) streams, merged.
void print_differing_keys(PgConnection& source, PgConnection& target, const TableConfig& table,
                          const std::vector<FingerprintColumn>& columns, const std::string& where, std::size_t most,
                          std::ostream& out) {
  const bool hash_record = hash_record_between(source.server_major_version(), target.server_major_version());
  const RowDiff diffed =
      diff_sides(source, target, row_hash_statements(table, columns, hash_record, where), false, most);
  const RowDiffCounts& n = diffed.counts;
  fmt::print(out, "    {} missing from the target, {} with other values, {} only in the target\n", n.missing, n.changed,
             n.gone);
  const std::vector<std::string> fetch = diffed.fetch.texts(most);
  const std::vector<std::string> gone = diffed.gone.texts(most > fetch.size() ? most - fetch.size() : 0);
  if (!fetch.empty()) fmt::print(out, "    missing or other values: {}\n", fmt::join(fetch, " "));
  if (!gone.empty()) fmt::print(out, "    only in the target: {}\n", fmt::join(gone, " "));
}

// Names the first `most` row values whose counts differ between the sides
// among the rows of one bucket of a table without a key: both sides'
// multisets of row hashes, merged, then each differing value with how
// often each side holds it.
void print_differing_rows(PgConnection& source, PgConnection& target, const TableConfig& table,
                          const std::vector<FingerprintColumn>& columns, const std::string& where, std::size_t most,
                          std::ostream& out) {
  const bool hash_record = hash_record_between(source.server_major_version(), target.server_major_version());
  const RowDiff diffed =
      diff_sides(source, target, multiset_statements(table, columns, hash_record, where), true, most);
  bool has_null = false;
  std::vector<std::int64_t> hashes = diffed.fetch.integers(has_null);
  for (const std::int64_t h : diffed.gone.integers(has_null)) hashes.push_back(h);
  if (hashes.size() > most) hashes.resize(most);
  const std::string array = hashes_array(hashes);
  const RowsOfHashes of_hashes = rows_of_hashes_statements(table, columns, hash_record);
  std::map<std::string, std::pair<std::string, std::string>> counts;  // row -> (source, target)
  const PgResult in_source = source.exec(of_hashes.counted_source, {array});
  const PgResult in_target = target.exec(of_hashes.counted_target, {array});
  for (int i = 0; i < in_source.rows(); ++i) counts[in_source.text(i, 0)].first = in_source.text(i, 1);
  for (int i = 0; i < in_target.rows(); ++i) counts[in_target.text(i, 0)].second = in_target.text(i, 1);
  const RowDiffCounts& n = diffed.counts;
  fmt::print(out, "    row values: {} missing from the target, {} held a different number of times, {} only in the "
                  "target\n", n.missing, n.changed, n.gone);
  for (const auto& [row, pair] : counts) {
    fmt::print(out, "    {}: {} in the source, {} in the target\n", row, pair.first.empty() ? "0" : pair.first,
               pair.second.empty() ? "0" : pair.second);
  }
}

// Verifies one table; returns whether every bucket matched. With `keys`,
// each bucket that differs names its first `keys` differing keys.
bool verify_table(const Config& config, const PipelineConfig& pipeline, const TableConfig& table, std::size_t keys,
                  std::ostream& out) {
  const TableKey key{pipeline.name, table.name};
  const auto state = connect_to(config, config.daemon.state);
  if (!state_schema_exists(*state)) {
    fmt::print(out, "{}: no watermark yet; nothing to verify\n", key.display());
    return true;
  }
  const auto stored = PgStateStore(*state).read_watermark(key);
  if (!stored) throw std::runtime_error(stored.error());
  if (!*stored) {
    fmt::print(out, "{}: no watermark yet; nothing to verify\n", key.display());
    return true;
  }
  const auto source = connect_to_source(config, pipeline.source);
  const auto target = connect_to(config, pipeline.target);
  const auto source_table = PgSource(*source).inspect(table);
  if (!source_table) throw std::runtime_error(source_table.error());
  // inspect leaves a listed column that is gone to the runs' drift check;
  // verify has nothing to compare it by.
  for (const std::string& c : source_table->columns) {
    const auto& catalog = source_table->catalog;
    if (std::none_of(catalog.begin(), catalog.end(), [&](const ColumnShape& s) { return s.name == c; })) {
      throw std::runtime_error("source table " + table.source_table->display() + " has no column " + c);
    }
  }
  const auto window = verify_window((*stored)->value, table.lookback);
  if (!window) throw std::runtime_error(window.error());
  normalise_key_text_session(*source);
  normalise_key_text_session(*target);
  const auto from_source = buckets(
      *source, verify_query(*table.source_table, source_table->columns, table.cursor, *window, pipeline.timezone));
  const auto from_target = buckets(
      *target, verify_query(table.target_table, source_table->columns, table.cursor, *window, pipeline.timezone));

  fmt::print(out, "{}: [{}, {}) {} -> {}\n", key.display(), cursor_to_text(window->lo), cursor_to_text(window->hi),
             table.source_table->display(), table.target_table.display());
  fmt::print(out, "  {:<12} {:>12} {:>12}  {}\n", "DAY", "SOURCE ROWS", "TARGET ROWS", "RESULT");
  std::map<std::string, std::pair<Bucket, Bucket>> all;
  for (const auto& [day, b] : from_source) all[day].first = b;
  for (const auto& [day, b] : from_target) all[day].second = b;
  bool ok = true;
  std::optional<std::vector<FingerprintColumn>> columns;
  for (const auto& [day, pair] : all) {
    const bool match = pair.first.rows == pair.second.rows && pair.first.checksum == pair.second.checksum;
    const char* result = match ? "ok" : (pair.first.rows == pair.second.rows ? "DIFFERENT VALUES" : "DIFFERENT COUNT");
    fmt::print(out, "  {:<12} {:>12} {:>12}  {}\n", day, pair.first.rows, pair.second.rows, result);
    ok = ok && match;
    if (match || keys == 0) continue;
    if (!columns) columns = hashed_columns(*target, table, *source_table);
    const std::string bucket = verify_bucket_predicate(table.cursor, *window, pipeline.timezone, day);
    if (table.key.empty()) {
      print_differing_rows(*source, *target, table, *columns, bucket, keys, out);
    } else {
      print_differing_keys(*source, *target, table, *columns, bucket, keys, out);
    }
  }
  if (all.empty()) fmt::print(out, "  (no rows on either side)\n");
  return ok;
}

// How many of a partition table's partitions verify compares: the most
// recent ones marked done (a week of days, say), each by re-running its
// query, which costs what a run of it costs. reconcile compares them all.
constexpr std::size_t kPartitionsVerified = 7;

}  // namespace

int run_verify(const ConfigPtr& config, const VerifyOptions& command_line, std::ostream& out, std::ostream& err) {
  const PipelineConfig* pipeline = config->find_pipeline(command_line.pipeline);
  if (pipeline == nullptr || (!command_line.table.empty() && pipeline->find_table(command_line.table) == nullptr)) {
    err << "tidemark verify: no table " << command_line.pipeline
        << (command_line.table.empty() ? "" : "." + command_line.table) << '\n';
    return kExitUsage;
  }
  bool all_ok = true;
  try {
    for (const TableConfig& table : pipeline->tables) {
      if (!command_line.table.empty() && table.name != command_line.table) continue;
      const TableModeSpec& mode = table_mode(table.mode);
      switch (mode.verify) {
        case VerifyBy::Skipped:
          fmt::print(out, "{}.{}: {}, not verified ({})\n", pipeline->name, table.name, a_mode_table(mode.mode),
                     mode.verify_skipped);
          break;
        case VerifyBy::Partitions:
          all_ok = compare_partitions(*config, *pipeline, table, kPartitionsVerified, out) && all_ok;
          break;
        case VerifyBy::Days: all_ok = verify_table(*config, *pipeline, table, command_line.keys, out) && all_ok; break;
      }
    }
  } catch (const std::exception& e) {
    err << "tidemark verify: " << e.what() << '\n';
    return kExitFailure;
  }
  return all_ok ? kExitOk : kExitFailure;
}

}  // namespace tidemark
