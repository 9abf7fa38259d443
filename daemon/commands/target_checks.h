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
// the pipeline and the table, to `err`; returns the number of refusals,
// a table or column that does not exist among them (every run refuses it
// too). A database it cannot reach is said and is not counted.
int check_targets(const Config& config, std::ostream& out, std::ostream& err);

}  // namespace tidemark
