#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <map>
#include <optional>
#include <ostream>

#include "core/run/partition_writer.h"
#include "core/text/sql_identifier.h"
#include "core/sql/verify_statements.h"
#include "core/time/partition_calendar.h"
#include "daemon/commands/command_support.h"
#include "daemon/commands/commands.h"
#include "daemon/commands/exit_code.h"
#include "daemon/commands/partition_backfill.h"
#include "daemon/commands/partition_compare.h"
#include "daemon/pg/partition_bounds.h"
#include "daemon/pg/pg_key_side.h"
#include "daemon/pg/pg_source.h"
#include "daemon/pg/pg_state_store.h"

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

// Verifies one table; returns whether every bucket matched.
bool verify_table(const Config& config, const PipelineConfig& pipeline, const TableConfig& table, std::ostream& out) {
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
  for (const auto& [day, pair] : all) {
    const bool match = pair.first.rows == pair.second.rows && pair.first.checksum == pair.second.checksum;
    const char* result = match ? "ok" : (pair.first.rows == pair.second.rows ? "DIFFERENT VALUES" : "DIFFERENT COUNT");
    fmt::print(out, "  {:<12} {:>12} {:>12}  {}\n", day, pair.first.rows, pair.second.rows, result);
    ok = ok && match;
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
      if (table.mode == TableMode::Snapshot) {
        // Its days are not a cursor's: nothing to compare day by day.
        fmt::print(out, "{}.{}: a snapshot table, not verified (each run makes its target equal to the source)\n",
                   pipeline->name, table.name);
        continue;
      }
      const bool table_ok = table.mode == TableMode::Partition
                                ? compare_partitions(*config, *pipeline, table, kPartitionsVerified, out)
                                : verify_table(*config, *pipeline, table, out);
      all_ok = table_ok && all_ok;
    }
  } catch (const std::exception& e) {
    err << "tidemark verify: " << e.what() << '\n';
    return kExitFailure;
  }
  return all_ok ? kExitOk : kExitFailure;
}

}  // namespace tidemark
