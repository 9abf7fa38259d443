// The `tidemark` command line (SPEC §4), built from the command table:
// which command, and its options filled in. A plain value built once in
// main; not thread-safe while being filled.
#pragma once

#include <any>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "daemon/commands/command_table.h"

namespace tidemark {

struct ParsedCommand {
  const CommandRow* command = nullptr;  // a row of the table it was parsed with
  std::any options;                     // std::shared_ptr<Options> of that row's type

  // Both require a successful parse.
  std::string_view name() const { return command->name; }
  // Runs the command on its options.
  int run(const CommandEnv& env) const { return command->handler(options, env); }
  // The options as the command sees them. Throws std::bad_any_cast when
  // they are not of type Options.
  template <class Options>
  const Options& options_as() const {
    return *std::any_cast<const std::shared_ptr<Options>&>(options);
  }
};

// Parses argv against `table`. Prints help or the version and returns
// kExitOk for --help/--version; prints the problem and returns kExitUsage
// on a usage error; otherwise returns nothing and fills `out`.
std::optional<int> parse_command_line(int argc, char** argv, ParsedCommand& out,
                                      const std::vector<CommandRow>& table = command_table());

}  // namespace tidemark
