// `tidemark validate`: checks every configuration file and prints either
// every error (exit 2) or a summary of each pipeline and table (exit 0).
#pragma once

#include <iosfwd>

#include "daemon/command_line.h"

namespace tidemark {

int run_validate(const CommandLine& command_line, std::ostream& out, std::ostream& err);

}  // namespace tidemark
