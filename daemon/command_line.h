// The `tidemark` command line (SPEC §4): which subcommand, and its
// options. A plain value built once in main.
#pragma once

#include <optional>
#include <string>

namespace tidemark {

struct CommandLine {
  std::string command;  // serve, validate, next, migrate, run, backfill, status, history, rewind, verify
  std::string config_path = "/etc/tidemark/tidemark.yaml";

  // next
  std::string cron;
  std::string tz = "UTC";
  std::string from;  // also backfill --from
  int count = 5;

  // run, backfill, history, rewind, verify
  std::string pipeline;
  std::string table;
  std::string to;  // backfill --to, rewind --to
  int parallel = 1;
  bool rerun = false;
  long max_partitions = 100000;  // backfill: more is refused as a likely typo
  bool json = false;
  int limit = 20;
  std::string reason;
  bool dry_run = false;
  bool force = false;  // rewind: past the source's clock
};

// Parses argv. Prints help or the version and returns kExitOk for
// --help/--version; prints the problem and returns kExitUsage on a usage
// error; otherwise returns nothing and fills `out`.
std::optional<int> parse_command_line(int argc, char** argv, CommandLine& out);

}  // namespace tidemark
