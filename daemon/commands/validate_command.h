// `tidemark validate`: checks every configuration file and prints either
// every error (exit 2) or a summary of each pipeline and table with its
// next 3 firings after `now` (exit 0).
#pragma once

#include <iosfwd>

#include "core/time/time_types.h"
#include "daemon/commands/common_options.h"

namespace tidemark {

// Validate reads config_path itself: it reports a broken file rather than
// being handed a loaded one.
struct ValidateOptions : CommonOptions {};

int run_validate(const ValidateOptions& command_line, Instant now, std::ostream& out, std::ostream& err);

}  // namespace tidemark
