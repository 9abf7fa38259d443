#include "daemon/commands/command_table.h"

#include <CLI/CLI.hpp>

#include "daemon/commands/command_support.h"
#include "daemon/commands/exit_code.h"
#include "daemon/logging.h"
#include "daemon/commands/next_command.h"
#include "daemon/commands/validate_command.h"

namespace tidemark {

void add_config_option(CLI::App& subcommand, std::string& config_path) {
  subcommand.add_option("--config", config_path, "daemon configuration file")->capture_default_str();
}

int run_with_config(const std::string& config_path, std::ostream& err,
                    const std::function<int(const ConfigPtr& config)>& command) {
  // Read once: the command gets the configuration its logging follows.
  const auto config = load_config_or_report(config_path, err);
  if (!config) return kExitUsage;
  setup_logging(config->daemon.log);
  return command(config);
}

const std::vector<CommandRow>& command_table() {
  static const std::vector<CommandRow> table = {
      database_command("serve", "run the daemon: fire every table on its schedule", nullptr, run_serve),
      local_command("validate", "check every configuration file and print each table's next 3 firings", nullptr,
                    run_validate),
      local_command("next", "print the next firings of a cron expression as UTC ISO-8601",
                    [](CLI::App& sub, NextOptions& o) {
                      sub.add_option("cron", o.cron, "cron expression, e.g. \"*/5 * * * *\" or @daily")->required();
                      sub.add_option("--tz", o.tz, "IANA time zone the expression is evaluated in")
                          ->capture_default_str();
                      sub.add_option("--from", o.from, "start after this instant (ISO-8601; default: now)");
                      sub.add_option("--count", o.count, "how many firings")
                          ->check(CLI::Range(1, 10000))
                          ->capture_default_str();
                    },
                    run_next),
      database_command("migrate", "create or upgrade the tidemark state schema", nullptr, run_migrate),
      database_command("run", "run a pipeline's tables once now, in the foreground",
                       [](CLI::App& sub, RunOptions& o) {
                         sub.add_option("pipeline", o.pipeline, "pipeline name")->required();
                         sub.add_option("--table", o.table, "only this table");
                       },
                       run_run),
      database_command("backfill", "re-run the partitions (or cursor range) in [from, to)",
                       [](CLI::App& sub, BackfillOptions& o) {
                         sub.add_option("pipeline", o.pipeline, "pipeline name")->required();
                         sub.add_option("--table", o.table, "table name")->required();
                         sub.add_option("--from", o.from, "first date, inclusive")->required();
                         sub.add_option("--to", o.to, "last date, exclusive")->required();
                         sub.add_option("--parallel", o.parallel, "partitions in flight")
                             ->check(CLI::Range(1, 64))
                             ->capture_default_str();
                         sub.add_flag("--rerun", o.rerun, "redo partitions already done");
                         sub.add_option("--max-partitions", o.max_partitions,
                                        "refuse a range of more partitions than this (a typo in --from or --to)")
                             ->check(CLI::Range(1L, 100000000L))
                             ->capture_default_str();
                       },
                       run_backfill),
      database_command("status", "every table's watermark, age, last run, stale flag and pause; filters and a summary",
                       [](CLI::App& sub, StatusOptions& o) {
                         sub.add_option("pipeline", o.pipeline, "only this pipeline");
                         sub.add_option("--table", o.table, "only tables whose name matches this glob (* and ?)");
                         sub.add_flag("--stale", o.stale, "only stale tables (or ahead of their source)");
                         sub.add_flag("--failing", o.failing, "only tables whose last run or reconcile failed");
                         sub.add_flag("--paused", o.paused, "only paused tables");
                         sub.add_flag("--waiting", o.waiting, "only tables held back by the horizon or an input");
                         sub.add_flag("--json", o.json, "print JSON");
                       },
                       run_status),
      database_command("fleet", "the members of the fleet: host, pid, lease age, tables owned",
                       [](CLI::App& sub, FleetOptions& o) { sub.add_flag("--json", o.json, "print JSON"); },
                       run_fleet),
      database_command("history", "recent runs",
                       [](CLI::App& sub, HistoryOptions& o) {
                         sub.add_option("pipeline", o.pipeline, "only this pipeline");
                         sub.add_option("--table", o.table, "only tables whose name matches this glob (* and ?)");
                         sub.add_option("--status", o.status, "only runs in this status")
                             ->check(CLI::IsMember({"running", "success", "failed"}));
                         sub.add_option("--limit", o.limit, "how many runs")
                             ->check(CLI::Range(1, 100000))
                             ->capture_default_str();
                         sub.add_flag("--json", o.json, "print JSON");
                       },
                       run_history),
      database_command("rewind", "move a watermark back (audited); also sets a first watermark",
                       [](CLI::App& sub, RewindOptions& o) {
                         sub.add_option("pipeline", o.pipeline, "pipeline name")->required();
                         sub.add_option("table", o.table, "table name")->required();
                         sub.add_option("--to", o.to, "the new watermark value")->required();
                         sub.add_option("--reason", o.reason, "why: kept forever in tidemark.watermark_resets")
                             ->required();
                         sub.add_flag("--dry-run", o.dry_run, "show what would change; change nothing");
                         sub.add_flag("--force", o.force, "allow a value past the source's clock (audited as forced)");
                       },
                       run_rewind),
      database_command("pause", "stop a pipeline's or a table's firings on every member (stored, audited)",
                       [](CLI::App& sub, PauseOptions& o) {
                         sub.add_option("pipeline", o.pipeline, "pipeline name")->required();
                         sub.add_option("--table", o.table, "only this table");
                         sub.add_option("--reason", o.reason, "why: shown in status, kept forever in "
                                                              "tidemark.pause_events")
                             ->required();
                       },
                       run_pause),
      database_command("resume", "start a paused pipeline's or table's firings again, at their next firing",
                       [](CLI::App& sub, ResumeOptions& o) {
                         sub.add_option("pipeline", o.pipeline, "pipeline name")->required();
                         sub.add_option("--table", o.table, "only this table's own pause");
                         sub.add_flag("--catch-up", o.catch_up, "run once now each table that missed a firing while "
                                                                "paused");
                       },
                       run_resume),
      database_command("reconcile",
                       "compare source and target keys: delete (or mark) rows gone from the source, copy missing "
                       "ones again",
                       [](CLI::App& sub, ReconcileOptions& o) {
                         sub.add_option("pipeline", o.pipeline, "pipeline name")->required();
                         sub.add_option("--table", o.table, "only this table (any incremental table)");
                         sub.add_flag("--dry-run", o.dry_run, "count and show what would change; change nothing");
                       },
                       run_reconcile),
      database_command("verify", "compare source and target: the lookback window per day, the last partitions done",
                       [](CLI::App& sub, VerifyOptions& o) {
                         sub.add_option("pipeline", o.pipeline, "pipeline name")->required();
                         sub.add_option("--table", o.table, "only this table");
                         sub.add_option("--keys", o.keys,
                                        "name the first N keys that differ in each day that differs (incremental "
                                        "tables)")
                             ->check(CLI::NonNegativeNumber);
                       },
                       run_verify),
      database_command("discover",
                       "read a source's catalog (read only) and write pipeline files: key, cursor or mode: snapshot "
                       "(mode: append for a table without a key on an insert-only cursor), each choice explained",
                       [](CLI::App& sub, DiscoverOptions& o) {
                         sub.add_option("--source", o.source, "the connection to read (a name in the daemon file)")
                             ->required();
                         sub.add_option("--schema", o.schemas,
                                        "only this schema (repeat for more); default: every schema but the system ones");
                         sub.add_option("--target-schema", o.target_schema,
                                        "the schema the tables load into; default: each source schema's own name");
                         sub.add_option("--target", o.target,
                                        "the connection the tables load into; default: the state connection");
                         sub.add_option("--write", o.write_dir,
                                        "write one pipeline file per schema into this folder instead of printing");
                         sub.add_flag("--force", o.force, "with --write: replace files that exist");
                         sub.add_option("--snapshot-limit", o.snapshot_limit,
                                        "estimated rows above which a table no trigger stamps gets its best cursor "
                                        "and a daily reconcile instead of mode: snapshot")
                             ->check(CLI::NonNegativeNumber);
                       },
                       run_discover),
      database_command("healthcheck", "ask the running daemon's /healthz (or /readyz): exit 0 when it answers 200",
                       [](CLI::App& sub, HealthcheckOptions& o) {
                         sub.add_flag("--ready", o.ready, "ask /readyz: configuration loaded, state database reachable");
                       },
                       run_healthcheck),
  };
  return table;
}

const CommandRow* find_command(const std::vector<CommandRow>& table, std::string_view name) {
  for (const CommandRow& row : table) {
    if (row.name == name) return &row;
  }
  return nullptr;
}

}  // namespace tidemark
