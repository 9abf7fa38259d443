// The database commands of `tidemark` (SPEC §4). Each returns the process
// exit code: 0 success, 1 runtime failure, 2 usage or configuration error.
// Output goes to `out`, problems to `err`; logs go through spdlog.
#pragma once

#include <iosfwd>

#include "daemon/command_line.h"

namespace tidemark {

int run_serve(const CommandLine& command_line, std::ostream& out, std::ostream& err);
int run_migrate(const CommandLine& command_line, std::ostream& out, std::ostream& err);
int run_run(const CommandLine& command_line, std::ostream& out, std::ostream& err);
int run_status(const CommandLine& command_line, std::ostream& out, std::ostream& err);
int run_history(const CommandLine& command_line, std::ostream& out, std::ostream& err);
int run_backfill(const CommandLine& command_line, std::ostream& out, std::ostream& err);
int run_verify(const CommandLine& command_line, std::ostream& out, std::ostream& err);
int run_rewind(const CommandLine& command_line, std::ostream& out, std::ostream& err);

}  // namespace tidemark
