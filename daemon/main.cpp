// tidemark: wires the command line to the commands. Nothing else lives here.
#include <csignal>
#include <cstdlib>
#include <iostream>

#include "daemon/command_line.h"
#include "daemon/commands.h"
#include "daemon/command_support.h"
#include "daemon/exit_code.h"
#include "daemon/logging.h"
#include "daemon/next_command.h"
#include "daemon/validate_command.h"

namespace {

using tidemark::Command;

// The commands that work on databases and log through the configured logger.
Command database_command(const std::string& name) {
  if (name == "serve") return tidemark::run_serve;
  if (name == "migrate") return tidemark::run_migrate;
  if (name == "run") return tidemark::run_run;
  if (name == "backfill") return tidemark::run_backfill;
  if (name == "status") return tidemark::run_status;
  if (name == "history") return tidemark::run_history;
  if (name == "rewind") return tidemark::run_rewind;
  if (name == "verify") return tidemark::run_verify;
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  // A peer closing a socket must be an error on that socket, not process death.
  std::signal(SIGPIPE, SIG_IGN);

  tidemark::CommandLine command_line;
  if (const auto exit_code = tidemark::parse_command_line(argc, argv, command_line)) return *exit_code;

  try {
    const auto now = date::floor<std::chrono::seconds>(std::chrono::system_clock::now());
    if (command_line.command == "next") return tidemark::run_next(command_line, now, std::cout, std::cerr);
    if (command_line.command == "validate") return tidemark::run_validate(command_line, now, std::cout, std::cerr);

    const Command command = database_command(command_line.command);
    if (command == nullptr) std::abort();  // the command line only accepts known commands
    // Read once: the command gets the configuration its logging follows.
    const auto config = tidemark::load_config_or_report(command_line.config_path, std::cerr);
    if (!config) return tidemark::kExitUsage;
    tidemark::setup_logging(config->daemon.log);
    return command(config, command_line, std::cout, std::cerr);
  } catch (const std::exception& e) {
    std::cerr << "tidemark " << command_line.command << ": " << e.what() << '\n';
    return tidemark::kExitFailure;
  }
}
