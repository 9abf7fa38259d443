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
#include "daemon/pg/data/pg_day_compare.h"
#include "daemon/serve/job_ports.h"

namespace tidemark {
namespace {

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

// Names the keys that differ among the rows of one bucket.
void print_differing_keys(const DifferingKeys& found, std::ostream& out) {
  const RowDiffCounts& n = found.counts;
  fmt::print(out, "    {} missing from the target, {} with other values, {} only in the target\n", n.missing, n.changed,
             n.gone);
  if (!found.fetch.empty()) fmt::print(out, "    missing or other values: {}\n", fmt::join(found.fetch, " "));
  if (!found.gone.empty()) fmt::print(out, "    only in the target: {}\n", fmt::join(found.gone, " "));
}

// Names the row values whose counts differ among the rows of one bucket of
// a table without a key, with how often each side holds each.
void print_differing_rows(const DifferingRows& found, std::ostream& out) {
  const RowDiffCounts& n = found.counts;
  fmt::print(out, "    row values: {} missing from the target, {} held a different number of times, {} only in the "
                  "target\n", n.missing, n.changed, n.gone);
  for (const auto& [row, pair] : found.held) {
    fmt::print(out, "    {}: {} in the source, {} in the target\n", row, pair.first.empty() ? "0" : pair.first,
               pair.second.empty() ? "0" : pair.second);
  }
}

// Verifies one table; returns whether every bucket matched. With `keys`,
// each bucket that differs names its first `keys` differing keys.
bool verify_table(const Config& config, const PipelineConfig& pipeline, const TableConfig& table, std::size_t keys,
                  std::ostream& out) {
  const TableKey key{pipeline.name, table.name};
  CancelToken interrupt;
  const InterruptScope interrupt_scope(interrupt);
  JobPorts ports(config, pipeline, JobSessions{}, interrupt, /*pipeline_time_zone=*/false);
  if (const auto& unreachable = ports.state_unreachable()) throw std::runtime_error(unreachable->message);
  const auto stored = state_schema_exists(ports.state().connection())
                          ? ports.state().read_watermark(key)
                          : Result<std::optional<StoredWatermark>>(std::nullopt);
  if (!stored) throw std::runtime_error(stored.error());
  if (!*stored) {
    fmt::print(out, "{}: no watermark yet; nothing to verify\n", key.display());
    return true;
  }
  if (const auto& unreachable = ports.data_unreachable()) throw std::runtime_error(unreachable->message);
  const auto source_table = ports.source().inspect(table);
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
  PgDayCompare compare(*ports.pg_source(), *ports.pg_target(), table, *source_table, interrupt);
  const auto all = compare.days(pipeline, *window);

  fmt::print(out, "{}: [{}, {}) {} -> {}\n", key.display(), cursor_to_text(window->lo), cursor_to_text(window->hi),
             table.source_table->display(), table.target_table.display());
  fmt::print(out, "  {:<12} {:>12} {:>12}  {}\n", "DAY", "SOURCE ROWS", "TARGET ROWS", "RESULT");
  bool ok = true;
  for (const auto& [day, pair] : all) {
    const bool match = pair.first.rows == pair.second.rows && pair.first.checksum == pair.second.checksum;
    const char* result = match ? "ok" : (pair.first.rows == pair.second.rows ? "DIFFERENT VALUES" : "DIFFERENT COUNT");
    fmt::print(out, "  {:<12} {:>12} {:>12}  {}\n", day, pair.first.rows, pair.second.rows, result);
    ok = ok && match;
    if (match || keys == 0) continue;
    const std::string bucket = verify_bucket_predicate(table.cursor, *window, pipeline.timezone, day);
    if (table.key.empty()) {
      print_differing_rows(compare.differing_rows(bucket, keys), out);
    } else {
      print_differing_keys(compare.differing_keys(bucket, keys), out);
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
