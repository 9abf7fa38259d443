#include "core/run/run_ports.h"

namespace tidemark {

std::string_view run_trigger_name(RunTrigger trigger) {
  switch (trigger) {
    case RunTrigger::Schedule: return "schedule";
    case RunTrigger::Manual: return "manual";
    case RunTrigger::Startup: return "startup";
    case RunTrigger::Backfill: return "backfill";
    case RunTrigger::Retry: return "retry";
    case RunTrigger::Reconcile: return "reconcile";
    case RunTrigger::Takeover: return "takeover";
    case RunTrigger::Input: return "input";
    case RunTrigger::Resume: return "resume";
  }
  return "?";
}

std::int64_t run_lock_key(const RunLock& lock) {
  if (!lock.partition) return advisory_lock_key(lock.table);
  return partition_lock_key(lock.table, lock.partition->lo.time_since_epoch().count());
}

std::string PartitionComparison::difference() const {
  if (source_rows != target_rows) {
    return "the query returns " + std::to_string(source_rows) + (source_rows == 1 ? " row" : " rows") +
           ", the target holds " + std::to_string(target_rows);
  }
  return same_checksum ? "no difference" : "the query returns other values in " + std::to_string(source_rows) +
                                               (source_rows == 1 ? " row" : " rows");
}

std::vector<Result<WindowProbe>> Source::probe_all(const std::vector<ProbeAsk>& asks) {
  std::vector<Result<WindowProbe>> out;
  for (const ProbeAsk& ask : asks) out.push_back(probe(*ask.table, *ask.source, ask.range));
  return out;
}

}  // namespace tidemark
