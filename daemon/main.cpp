// tidemark: wires the command line to the commands. Nothing else lives here.
#include <csignal>
#include <iostream>

#include "core/time/time_types.h"
#include "daemon/commands/command_line.h"
#include "daemon/commands/exit_code.h"

int main(int argc, char** argv) {
  // A peer closing a socket must be an error on that socket, not process death.
  std::signal(SIGPIPE, SIG_IGN);

  tidemark::ParsedCommand command;
  if (const auto exit_code = tidemark::parse_command_line(argc, argv, command)) return *exit_code;

  try {
    const auto now = date::floor<std::chrono::seconds>(std::chrono::system_clock::now());
    return command.run({now, std::cout, std::cerr});
  } catch (const std::exception& e) {
    std::cerr << "tidemark " << command.name() << ": " << e.what() << '\n';
    return tidemark::kExitFailure;
  }
}
