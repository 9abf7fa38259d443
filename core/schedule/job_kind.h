// What a firing runs, a job's key, and when each job last started. Value types;
// thread-safe.
#pragma once

#include <map>
#include <string>
#include <tuple>

#include "core/run/table_key.h"
#include "core/time/time_types.h"

namespace tidemark {

// What a firing runs: the table's load, or its reconcile (deletes:). Each
// is a job of its own, with its own schedule, one going or waiting at a
// time; both contend for the table's advisory lock when they run.
enum class JobKind { Load, Reconcile };

// One job: a table's load or its reconcile. Ordered, to key maps and sets.
struct JobKey {
  TableKey table;
  JobKind kind = JobKind::Load;

  friend bool operator<(const JobKey& a, const JobKey& b) {
    return std::tie(a.table.pipeline, a.table.table, a.kind) < std::tie(b.table.pipeline, b.table.table, b.kind);
  }
  friend bool operator==(const JobKey& a, const JobKey& b) { return a.table == b.table && a.kind == b.kind; }
};

// When each job last started a run its schedule counts, from the state
// database.
using LastStarts = std::map<JobKey, Instant>;

}  // namespace tidemark
