// One run of a table by the run class its mode's row names
// (core/config/table_modes.h): the one place that turns that row into a
// class. A function over a RunContext, on the calling (worker) thread;
// it owns nothing and, like the run classes, reports expected failures in
// the summary.
#pragma once

#include "core/run/run_context.h"

namespace tidemark {

// Runs the table of `context` once with its mode's run class and returns
// that run's summary (the run class has reported it to the observer).
RunSummary run_table(const RunContext& context, RunTrigger trigger);

}  // namespace tidemark
