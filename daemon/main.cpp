// tidemark: wires the command line to the commands. Nothing else lives here.
#include <csignal>
#include <iostream>

#include "daemon/command_line.h"
#include "daemon/commands.h"
#include "daemon/config_loader.h"
#include "daemon/logging.h"
#include "daemon/exit_code.h"
#include "daemon/next_command.h"
#include "daemon/validate_command.h"

int main(int argc, char** argv) {
  // A peer closing a socket must be an error on that socket, not process death.
  std::signal(SIGPIPE, SIG_IGN);

  tidemark::CommandLine command_line;
  if (const auto exit_code = tidemark::parse_command_line(argc, argv, command_line)) return *exit_code;

  try {
    const auto now = date::floor<std::chrono::seconds>(std::chrono::system_clock::now());
    if (command_line.command == "next") return tidemark::run_next(command_line, now, std::cout, std::cerr);
    if (command_line.command == "validate") return tidemark::run_validate(command_line, now, std::cout, std::cerr);

    // Database commands log through the configured logger.
    tidemark::LogConfig log_config;
    if (const auto loaded = tidemark::load_config(command_line.config_path); loaded.value) {
      log_config = loaded.value->daemon.log;
    }
    tidemark::setup_logging(log_config);
    if (command_line.command == "serve") return tidemark::run_serve(command_line, std::cout, std::cerr);
    if (command_line.command == "migrate") return tidemark::run_migrate(command_line, std::cout, std::cerr);
    if (command_line.command == "run") return tidemark::run_run(command_line, std::cout, std::cerr);
    if (command_line.command == "status") return tidemark::run_status(command_line, std::cout, std::cerr);
    if (command_line.command == "history") return tidemark::run_history(command_line, std::cout, std::cerr);
    if (command_line.command == "backfill") return tidemark::run_backfill(command_line, std::cout, std::cerr);
    if (command_line.command == "rewind") return tidemark::run_rewind(command_line, std::cout, std::cerr);
    std::cerr << "tidemark " << command_line.command << ": not implemented yet\n";
    return tidemark::kExitFailure;
  } catch (const std::exception& e) {
    std::cerr << "tidemark " << command_line.command << ": " << e.what() << '\n';
    return tidemark::kExitFailure;
  }
}
