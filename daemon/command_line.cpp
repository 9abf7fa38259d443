#include "daemon/command_line.h"

#include <CLI/CLI.hpp>

#include "daemon/exit_code.h"
#include "daemon/version.h"

namespace tidemark {

std::optional<int> parse_command_line(int argc, char** argv, CommandLine& out) {
  CLI::App app{"tidemark: incremental batch loads between PostgreSQL databases, on a schedule, with durable watermarks",
               "tidemark"};
  app.set_version_flag("--version", std::string(kVersion));
  app.require_subcommand(1);
  app.add_option("--config", out.config_path, "daemon configuration file")->capture_default_str();

  const auto subcommand = [&](const char* name, const char* description) {
    CLI::App* sub = app.add_subcommand(name, description);
    sub->add_option("--config", out.config_path, "daemon configuration file")->capture_default_str();
    return sub;
  };

  subcommand("serve", "run the daemon: fire every table on its schedule");
  subcommand("validate", "check every configuration file and print each table's next 3 firings");
  CLI::App* next = subcommand("next", "print the next firings of a cron expression as UTC ISO-8601");
  next->add_option("cron", out.cron, "cron expression, e.g. \"*/5 * * * *\" or @daily")->required();
  next->add_option("--tz", out.tz, "IANA time zone the expression is evaluated in")->capture_default_str();
  next->add_option("--from", out.from, "start after this instant (ISO-8601; default: now)");
  next->add_option("--count", out.count, "how many firings")->check(CLI::Range(1, 10000))->capture_default_str();
  subcommand("migrate", "create or upgrade the tidemark state schema");
  CLI::App* run = subcommand("run", "run a pipeline's tables once now, in the foreground");
  run->add_option("pipeline", out.pipeline, "pipeline name")->required();
  run->add_option("--table", out.table, "only this table");
  CLI::App* backfill = subcommand("backfill", "re-run the partitions (or cursor range) in [from, to)");
  backfill->add_option("pipeline", out.pipeline, "pipeline name")->required();
  backfill->add_option("--table", out.table, "table name")->required();
  backfill->add_option("--from", out.from, "first date, inclusive")->required();
  backfill->add_option("--to", out.to, "last date, exclusive")->required();
  backfill->add_option("--parallel", out.parallel, "partitions in flight")->check(CLI::Range(1, 64))->capture_default_str();
  backfill->add_flag("--rerun", out.rerun, "redo partitions already done");
  backfill->add_option("--max-partitions", out.max_partitions,
                       "refuse a range of more partitions than this (a typo in --from or --to)")
      ->check(CLI::Range(1L, 100000000L))
      ->capture_default_str();
  CLI::App* status = subcommand("status", "every table's watermark, age, last run and stale flag");
  status->add_flag("--json", out.json, "print JSON");
  CLI::App* history = subcommand("history", "recent runs");
  history->add_option("pipeline", out.pipeline, "only this pipeline");
  history->add_option("--limit", out.limit, "how many runs")->check(CLI::Range(1, 100000))->capture_default_str();
  history->add_flag("--json", out.json, "print JSON");
  CLI::App* rewind = subcommand("rewind", "move a watermark back (audited); also sets a first watermark");
  rewind->add_option("pipeline", out.pipeline, "pipeline name")->required();
  rewind->add_option("table", out.table, "table name")->required();
  rewind->add_option("--to", out.to, "the new watermark value")->required();
  rewind->add_option("--reason", out.reason, "why: kept forever in tidemark.watermark_resets")->required();
  rewind->add_flag("--dry-run", out.dry_run, "show what would change; change nothing");
  rewind->add_flag("--force", out.force, "allow a value past the source's clock (audited as forced)");
  CLI::App* verify = subcommand("verify", "compare source and target over the lookback window, per day");
  verify->add_option("pipeline", out.pipeline, "pipeline name")->required();
  verify->add_option("--table", out.table, "only this table");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  for (CLI::App* sub : app.get_subcommands()) out.command = sub->get_name();
  return std::nullopt;
}

}  // namespace tidemark
