// What a firing runs, and when each job last started. Value types;
// thread-safe.
#pragma once

#include <map>
#include <string>
#include <tuple>

#include "core/time/time_types.h"

namespace tidemark {

// What a firing runs: the table's load, or its reconcile (deletes:). Each
// is a job of its own, with its own schedule, one going or waiting at a
// time; both contend for the table's advisory lock when they run.
enum class JobKind { Load, Reconcile };

// When each job (pipeline, table, kind) last started a run its schedule
// counts, from the state database.
using LastStarts = std::map<std::tuple<std::string, std::string, JobKind>, Instant>;

}  // namespace tidemark
