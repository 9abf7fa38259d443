#include "daemon/commands/partition_compare.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/run/partition_writer.h"
#include "core/text/sql_identifier.h"
#include "core/sql/verify_statements.h"
#include "core/time/partition_calendar.h"
#include "daemon/commands/command_support.h"
#include "daemon/commands/partition_backfill.h"
#include "daemon/pg/partition_bounds.h"
#include "daemon/pg/pg_state_store.h"
#include "daemon/pg/state_schema.h"

namespace tidemark {

bool compare_partitions(const Config& config, const PipelineConfig& pipeline, const TableConfig& table,
                        std::optional<std::size_t> last, std::ostream& out) {
  const TableKey key{pipeline.name, table.name};
  const auto state = connect_to(config, config.daemon.state);
  std::vector<Instant> done;
  if (state_schema_exists(*state)) {
    // Every partition a calendar can hold: years 1 to 9999.
    const auto all = PgStateStore(*state).done_partitions(key, Instant(std::chrono::seconds(-62135596800LL)),
                                                          Instant(std::chrono::seconds(253402300799LL)));
    if (!all) throw std::runtime_error(all.error());
    done = *all;
  }
  if (done.empty()) {
    fmt::print(out, "{}: no partition written yet; nothing to compare\n", key.display());
    return true;
  }
  std::sort(done.begin(), done.end());
  if (last && done.size() > *last) done.erase(done.begin(), done.end() - static_cast<std::ptrdiff_t>(*last));

  const auto source = connect_to_source(config, pipeline.source);
  const auto target = connect_to(config, pipeline.target);
  // As a partition's load reads it: in the pipeline's time zone, on both
  // sides, so that each prints the same values alike.
  source->set_time_zone(pipeline.timezone);
  target->set_time_zone(pipeline.timezone);
  const TimeZone& zone = *pipeline.zone;
  const PartitionUnit unit = table.partition->unit;
  fmt::print(out, "{}: {} {} partitions done, query -> {}\n", key.display(), last ? "the last" : "all",
             done.size(), table.target_table.display());
  fmt::print(out, "  {:<20} {:>12} {:>12}  {}\n", "PARTITION", "SOURCE ROWS", "TARGET ROWS", "RESULT");
  std::optional<PartitionVerifyQueries> queries;
  bool ok = true;
  std::string first_bad;
  std::string last_bad_hi;
  for (const Instant lo : done) {
    const TimeWindow partition = partition_containing(lo, unit, zone);
    const PartitionRequest request = partition_request(key, 0, partition, zone, unit);
    const auto bounds = partition_bounds(*target, table, request);
    if (!bounds) throw std::runtime_error(bounds.error());
    if (!queries) {
      // Compared by the query's own columns, by name.
      const PgResult shape = source->exec(
          "SELECT * FROM (\n" + without_trailing_semicolons(table.query) + "\n) q LIMIT 0", bounds->params,
          bounds->types);
      std::vector<std::string> columns;
      for (int c = 0; c < shape.columns(); ++c) columns.push_back(shape.column_name(c));
      queries = partition_verify_queries(table, columns, bounds->cast);
    }
    const PgResult from_source = source->exec(queries->source, bounds->params, bounds->types);
    const PgResult from_target = target->exec(queries->target, bounds->params);
    const std::int64_t source_rows = from_source.integer(0, 0);
    const std::int64_t target_rows = from_target.integer(0, 0);
    const bool match = source_rows == target_rows && from_source.text(0, 1) == from_target.text(0, 1);
    const char* result = match ? "ok" : (source_rows == target_rows ? "DIFFERENT VALUES" : "DIFFERENT COUNT");
    fmt::print(out, "  {:<20} {:>12} {:>12}  {}\n", partition_label(partition, unit, zone), source_rows, target_rows, result);
    if (!match) {
      if (first_bad.empty()) first_bad = request.lo_local;
      last_bad_hi = request.hi_local;
    }
    ok = ok && match;
  }
  if (!ok) {
    fmt::print(out, "  rewrite them with: tidemark backfill {} --table {} --from '{}' --to '{}' --rerun\n",
               pipeline.name, table.name, first_bad, last_bad_hi);
  }
  return ok;
}


}  // namespace tidemark
