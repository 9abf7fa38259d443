// The table of `tidemark` commands (SPEC §4): each row is a command's name,
// its one-line summary, the registration of its own options and the
// function that runs it. The command line, its --help and main's dispatch
// are all built from this one table. Built once and never changed after;
// safe to read from any thread.
#pragma once

#include <any>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/time/time_types.h"
#include "daemon/commands/commands.h"
#include "daemon/commands/common_options.h"

namespace CLI {
class App;
}

namespace tidemark {

// What a command is given besides its options.
struct CommandEnv {
  Instant now;  // commands that need no database start from it (next, validate)
  std::ostream& out;
  std::ostream& err;
};

// A command's options once registered on its subcommand: `typed` holds the
// std::shared_ptr<Options> the command line fills while it parses, and
// `common` points at the same object's CommonOptions.
struct BoundOptions {
  std::any typed;
  CommonOptions* common = nullptr;
};

struct CommandRow {
  std::string_view name;
  std::string_view summary;
  // Creates the command's options at their defaults and registers --config
  // and the command's own options on `subcommand`, bound to them.
  std::function<BoundOptions(CLI::App& subcommand)> options;
  // Runs the command on options that `options` made and the command line
  // filled. Requires `typed` of this row's Options type (std::bad_any_cast
  // otherwise). Returns the exit code; a command's exception passes through.
  std::function<int(const std::any& typed, const CommandEnv& env)> handler;
};

// Every command, in the order --help lists them.
const std::vector<CommandRow>& command_table();

// The row named `name` in `table`, or nullptr.
const CommandRow* find_command(const std::vector<CommandRow>& table, std::string_view name);

// Registers a command's own options (besides --config) on its subcommand,
// bound to `options`; nullptr for a command that has none.
template <class Options>
using OptionsRegistration = void (*)(CLI::App& subcommand, Options& options);

// A command that works without a database and reads no configuration
// first (next, validate: validate reports a broken file itself).
template <class Options>
using LocalCommand = int (*)(const Options& options, Instant now, std::ostream& out, std::ostream& err);

// Registers --config on `subcommand`, bound to `config_path`.
void add_config_option(CLI::App& subcommand, std::string& config_path);

// Loads and validates the configuration at `config_path` and sets up
// logging from it, then runs `command` on it. An invalid configuration is
// printed to `err` and returns kExitUsage without running `command`.
int run_with_config(const std::string& config_path, std::ostream& err,
                    const std::function<int(const ConfigPtr& config)>& command);

namespace command_row_detail {

// Keeps Options deduced from the handler alone, so a registration may be a
// captureless lambda.
template <class T>
struct NonDeduced {
  using type = T;
};

template <class Options>
std::function<BoundOptions(CLI::App&)> bind_options(OptionsRegistration<Options> add_options) {
  return [add_options](CLI::App& subcommand) {
    // Shared, so the storage CLI11 writes into outlives the parser.
    auto options = std::make_shared<Options>();
    add_config_option(subcommand, options->config_path);
    if (add_options != nullptr) add_options(subcommand, *options);
    CommonOptions* common = options.get();
    return BoundOptions{std::any(std::move(options)), common};
  };
}

}  // namespace command_row_detail

// A row for a command that needs the configuration loaded and logging set
// up first (every command that touches a database). A null handler gives
// a row without one, which the table's tests refuse.
template <class Options>
CommandRow database_command(std::string_view name, std::string_view summary,
                            typename command_row_detail::NonDeduced<OptionsRegistration<Options>>::type add_options,
                            DatabaseCommand<Options> handler) {
  static_assert(std::is_base_of_v<CommonOptions, Options>, "every command takes --config");
  CommandRow row{name, summary, command_row_detail::bind_options<Options>(add_options), nullptr};
  if (handler != nullptr) {
    row.handler = [handler](const std::any& typed, const CommandEnv& env) {
      const Options& options = *std::any_cast<const std::shared_ptr<Options>&>(typed);
      return run_with_config(options.config_path, env.err,
                             [&](const ConfigPtr& config) { return handler(config, options, env.out, env.err); });
    };
  }
  return row;
}

// A row for a command that needs no loaded configuration.
template <class Options>
CommandRow local_command(std::string_view name, std::string_view summary,
                         typename command_row_detail::NonDeduced<OptionsRegistration<Options>>::type add_options,
                         LocalCommand<Options> handler) {
  static_assert(std::is_base_of_v<CommonOptions, Options>, "every command takes --config");
  CommandRow row{name, summary, command_row_detail::bind_options<Options>(add_options), nullptr};
  if (handler != nullptr) {
    row.handler = [handler](const std::any& typed, const CommandEnv& env) {
      return handler(*std::any_cast<const std::shared_ptr<Options>&>(typed), env.now, env.out, env.err);
    };
  }
  return row;
}

}  // namespace tidemark
