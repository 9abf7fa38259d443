#include "daemon/commands/partition_compare.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/run/cancel_token.h"
#include "core/run/partition_writer.h"
#include "core/time/partition_calendar.h"
#include "daemon/commands/command_support.h"
#include "daemon/serve/job_ports.h"

namespace tidemark {

bool compare_partitions(const Config& config, const PipelineConfig& pipeline, const TableConfig& table,
                        std::size_t last, std::ostream& out) {
  const TableKey key{pipeline.name, table.name};
  const CancelToken cancel;
  // As a partition's load reads it: in the pipeline's time zone, on both
  // sides, so that each prints the same values alike.
  JobPorts ports(config, pipeline, JobSessions{}, cancel, /*pipeline_time_zone=*/true);
  if (const auto& down = ports.state_unreachable()) throw std::runtime_error(down->message);
  std::vector<Instant> done;
  if (state_schema_exists(ports.state().connection())) {
    const auto all = ports.state().done_partitions(key, kCalendarStart, kCalendarEnd);
    if (!all) throw std::runtime_error(all.error());
    done = *all;
  }
  if (done.empty()) {
    fmt::print(out, "{}: no partition written yet; nothing to compare\n", key.display());
    return true;
  }
  if (const auto& down = ports.data_unreachable()) throw std::runtime_error(down->message);
  std::sort(done.begin(), done.end());
  if (done.size() > last) done.erase(done.begin(), done.end() - static_cast<std::ptrdiff_t>(last));

  const TimeZone& zone = *pipeline.zone;
  const PartitionUnit unit = table.partition->unit;
  fmt::print(out, "{}: the last {} partitions done, query -> {}\n", key.display(), done.size(),
             table.target_table.display());
  fmt::print(out, "  {:<20} {:>12} {:>12}  {}\n", "PARTITION", "SOURCE ROWS", "TARGET ROWS", "RESULT");
  bool ok = true;
  std::string first_bad;
  std::string last_bad_hi;
  for (const Instant lo : done) {
    const TimeWindow partition = partition_containing(lo, unit, zone);
    const PartitionRequest request = partition_request(key, 0, partition, zone, unit);
    const auto compared = ports.target().compare_partition(table, request);
    if (!compared) throw std::runtime_error(compared.error());
    const bool match = compared->equal();
    const char* result = match                                              ? "ok"
                         : compared->source_rows == compared->target_rows ? "DIFFERENT VALUES"
                                                                            : "DIFFERENT COUNT";
    fmt::print(out, "  {:<20} {:>12} {:>12}  {}\n", partition_label(partition, unit, zone), compared->source_rows,
               compared->target_rows, result);
    if (!match) {
      if (first_bad.empty()) first_bad = request.lo_local;
      last_bad_hi = request.hi_local;
    }
    ok = ok && match;
  }
  if (!ok) {
    fmt::print(out, "  rewrite them with: tidemark reconcile {} --table {} (or tidemark backfill {} --table {} --from "
                    "'{}' --to '{}' --rerun)\n",
               pipeline.name, table.name, pipeline.name, table.name, first_bad, last_bad_hi);
  }
  return ok;
}

}  // namespace tidemark
