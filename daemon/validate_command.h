// `tidemark validate`: checks every configuration file and prints either
// every error (exit 2) or a summary of each pipeline and table with its
// next 3 firings after `now` (exit 0).
#pragma once

#include <iosfwd>

#include "core/time_types.h"
#include "daemon/command_line.h"

namespace tidemark {

int run_validate(const CommandLine& command_line, Instant now, std::ostream& out, std::ostream& err);

}  // namespace tidemark
