#include "daemon/commands/command_line.h"

#include <CLI/CLI.hpp>

#include "daemon/commands/exit_code.h"
#include "daemon/version.h"

namespace tidemark {

std::optional<int> parse_command_line(int argc, char** argv, ParsedCommand& out, const std::vector<CommandRow>& table) {
  CLI::App app{"tidemark: incremental batch loads between PostgreSQL databases, on a schedule, with durable watermarks",
               "tidemark"};
  app.set_version_flag("--version", std::string(kVersion));
  app.require_subcommand(1);
  // --config before the command; the command's own --config, when given, wins.
  std::string config_path = kDefaultConfigPath;
  app.add_option("--config", config_path, "daemon configuration file")->capture_default_str();

  std::vector<BoundOptions> bound;
  bound.reserve(table.size());
  for (const CommandRow& row : table) {
    CLI::App* sub = app.add_subcommand(std::string(row.name), std::string(row.summary));
    bound.push_back(row.options(*sub));
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  // require_subcommand(1): exactly one was given, and it is a row of `table`.
  const CLI::App* chosen = app.get_subcommands().front();
  const CommandRow* command = find_command(table, chosen->get_name());
  BoundOptions& options = bound[static_cast<std::size_t>(command - table.data())];
  if (chosen->count("--config") == 0) options.common->config_path = config_path;
  out.command = command;
  out.options = std::move(options.typed);
  return std::nullopt;
}

}  // namespace tidemark
