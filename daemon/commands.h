// The database commands of `tidemark` (SPEC §4). Each is given the
// configuration main loaded and validated once, and returns the process
// exit code: 0 success, 1 runtime failure, 2 usage or configuration error.
// Output goes to `out`, problems to `err`; logs go through spdlog.
#pragma once

#include <iosfwd>
#include <memory>

#include "core/config_model.h"
#include "daemon/command_line.h"

namespace tidemark {

using ConfigPtr = std::shared_ptr<const Config>;
using Command = int (*)(const ConfigPtr& config, const CommandLine& command_line, std::ostream& out,
                        std::ostream& err);

int run_serve(const ConfigPtr& config, const CommandLine& command_line, std::ostream& out, std::ostream& err);
int run_migrate(const ConfigPtr& config, const CommandLine& command_line, std::ostream& out, std::ostream& err);
int run_run(const ConfigPtr& config, const CommandLine& command_line, std::ostream& out, std::ostream& err);
int run_status(const ConfigPtr& config, const CommandLine& command_line, std::ostream& out, std::ostream& err);
int run_history(const ConfigPtr& config, const CommandLine& command_line, std::ostream& out, std::ostream& err);
int run_backfill(const ConfigPtr& config, const CommandLine& command_line, std::ostream& out, std::ostream& err);
int run_verify(const ConfigPtr& config, const CommandLine& command_line, std::ostream& out, std::ostream& err);
int run_rewind(const ConfigPtr& config, const CommandLine& command_line, std::ostream& out, std::ostream& err);

}  // namespace tidemark
