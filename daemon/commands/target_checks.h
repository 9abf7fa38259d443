// What `tidemark validate` learns from the targets: for each incremental
// table whose source and target it can reach, whether the target can take
// every load (core/run/schema_drift.h, core/run/target_fit.h: the checks a
// run makes before its first write), and which columns the target
// generates itself and a load leaves out. Runs on the calling thread.
#pragma once

#include <iosfwd>

#include "core/config/config_model.h"

namespace tidemark {

// Prints each table's answer to `out` and each refusal, naming the file,
// the pipeline and the table, to `err`; returns the number of refusals.
// A database it cannot reach, or a table that does not exist yet, is said
// and is not counted: a run says so too, and may find it there by then.
int check_targets(const Config& config, std::ostream& out, std::ostream& err);

}  // namespace tidemark
