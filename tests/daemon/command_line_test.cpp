// The command table, the command line built from it, and the commands
// that need no database.
#include <doctest/doctest.h>

#include <iostream>
#include <set>
#include <sstream>
#include <vector>

#include "core/time/instant_text.h"
#include "daemon/commands/command_line.h"
#include "daemon/commands/next_command.h"
#include "daemon/commands/validate_command.h"

namespace tidemark {
namespace {

std::optional<int> parse(std::vector<std::string> args, ParsedCommand& out) {
  args.insert(args.begin(), "tidemark");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return parse_command_line(static_cast<int>(argv.size()), argv.data(), out);
}

// What the command line prints to stdout and stderr while parsing `args`.
struct Printed {
  std::optional<int> exit_code;
  std::string out;
  std::string err;
};

Printed parse_printed(std::vector<std::string> args) {
  std::ostringstream out, err;
  auto* old_out = std::cout.rdbuf(out.rdbuf());
  auto* old_err = std::cerr.rdbuf(err.rdbuf());
  ParsedCommand parsed;
  Printed printed;
  printed.exit_code = parse(std::move(args), parsed);
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  printed.out = out.str();
  printed.err = err.str();
  return printed;
}

}  // namespace

TEST_CASE("the command table holds SPEC's commands, each named once with a summary, options and a handler") {
  std::vector<std::string> names;
  std::set<std::string_view> unique;
  for (const CommandRow& row : command_table()) {
    CAPTURE(row.name);
    names.emplace_back(row.name);
    CHECK(unique.insert(row.name).second);
    CHECK_FALSE(row.summary.empty());
    CHECK(row.options);
    CHECK(row.handler);
    CHECK(find_command(command_table(), row.name) == &row);
  }
  // The order is the order --help lists them in.
  CHECK(names == std::vector<std::string>{"serve", "validate", "next", "migrate", "run", "backfill", "status",
                                          "fleet", "history", "rewind", "pause", "resume", "reconcile", "verify",
                                          "discover", "healthcheck"});
}

TEST_CASE("a row built without a handler has none, so the table test above would refuse it") {
  const CommandRow row = database_command<RunOptions>("x", "a summary", nullptr, nullptr);
  CHECK(row.options);
  CHECK_FALSE(row.handler);
}

TEST_CASE("--help lists every command of the table with its summary, and exits 0") {
  const Printed help = parse_printed({"--help"});
  CHECK(help.exit_code == 0);
  for (const CommandRow& row : command_table()) {
    CAPTURE(row.name);
    CHECK(help.out.find("  " + std::string(row.name) + " ") != std::string::npos);
    CHECK(help.out.find(std::string(row.summary)) != std::string::npos);
  }
}

TEST_CASE("every command takes --config and --help (SPEC 4)") {
  for (const CommandRow& row : command_table()) {
    CAPTURE(row.name);
    const Printed help = parse_printed({std::string(row.name), "--help"});
    CHECK(help.exit_code == 0);
    CHECK(help.out.find(std::string(row.summary)) != std::string::npos);
    CHECK(help.out.find("--config TEXT=/etc/tidemark/tidemark.yaml") != std::string::npos);
  }
}

TEST_CASE("a command's options are rejected for another command, with exit 2") {
  struct Row {
    std::vector<std::string> args;
  };
  const std::vector<Row> rows = {
      {{"status", "--reason", "why"}},                        // pause's
      {{"run", "shop", "--json"}},                             // status's and history's
      {{"serve", "--count", "3"}},                             // next's
      {{"migrate", "--dry-run"}},                              // rewind's
      {{"validate", "--tz", "UTC"}},                           // next's
      {{"history", "--reason", "why"}},                        // rewind's
      {{"verify", "shop", "--parallel", "2"}},                 // backfill's
      {{"next", "* * * * *", "--limit", "3"}},                 // history's
      {{"rewind", "p", "t", "--to", "1", "--reason", "r", "--rerun"}},  // backfill's
      {{"backfill", "p", "--table", "t", "--from", "a", "--to", "b", "--force"}},  // rewind's
      {{"fleet", "shop"}},                                     // a positional fleet does not take
      {{"resume", "shop", "--reason", "why"}},                 // pause's
  };
  for (const Row& row : rows) {
    CAPTURE(row.args[0]);
    CAPTURE(row.args.back());
    const Printed printed = parse_printed(row.args);
    CHECK(printed.exit_code == 2);
    CHECK(printed.err.find("not expected") != std::string::npos);
  }
}

TEST_CASE("usage errors exit 2 and say why; --version exits 0") {
  struct Row {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Row> rows = {
      {{}, "A subcommand is required"},
      {{"bogus"}, "A subcommand is required"},
      {{"run"}, "pipeline is required"},
      {{"rewind", "p", "t", "--to", "5"}, "--reason is required"},
      {{"next", "* * * * *", "--count", "0"}, "--count: Value 0 not in range 1 to 10000"},
      {{"backfill", "p", "--table", "t", "--from", "a", "--to", "b", "--parallel", "65"}, "--parallel"},
      {{"backfill", "p", "--table", "t", "--from", "a", "--to", "b", "--max-partitions", "0"}, "--max-partitions"},
      {{"history", "--limit", "0"}, "--limit"},
  };
  for (const Row& row : rows) {
    CAPTURE(row.says);
    const Printed printed = parse_printed(row.args);
    CHECK(printed.exit_code == 2);
    CHECK(printed.err.find(row.says) != std::string::npos);
  }
  const Printed version = parse_printed({"--version"});
  CHECK(version.exit_code == 0);
  CHECK_FALSE(version.out.empty());
}

TEST_CASE("options land in their command's struct, with SPEC's defaults when absent") {
  ParsedCommand run;
  REQUIRE_FALSE(parse({"run", "shop", "--table", "orders", "--config", "/tmp/t.yaml"}, run));
  CHECK(run.name() == "run");
  CHECK(run.options_as<RunOptions>().pipeline == "shop");
  CHECK(run.options_as<RunOptions>().table == "orders");
  CHECK(run.options_as<RunOptions>().config_path == "/tmp/t.yaml");
  CHECK_THROWS_AS(run.options_as<RewindOptions>(), std::bad_any_cast);

  ParsedCommand backfill;
  REQUIRE_FALSE(parse({"--config", "/x.yaml", "backfill", "p", "--table", "t", "--from", "2026-01-01", "--to",
                       "2026-02-01", "--parallel", "3", "--rerun"},
                      backfill));
  const auto& b = backfill.options_as<BackfillOptions>();
  CHECK(b.config_path == "/x.yaml");
  CHECK(b.pipeline == "p");
  CHECK(b.table == "t");
  CHECK(b.from == "2026-01-01");
  CHECK(b.to == "2026-02-01");
  CHECK(b.parallel == 3);
  CHECK(b.rerun);
  CHECK(b.max_partitions == 100000);

  ParsedCommand rewind;
  REQUIRE_FALSE(parse({"rewind", "p", "t", "--to", "2999-01-01", "--reason", "why", "--force"}, rewind));
  const auto& r = rewind.options_as<RewindOptions>();
  CHECK(r.pipeline == "p");
  CHECK(r.table == "t");
  CHECK(r.to == "2999-01-01");
  CHECK(r.reason == "why");
  CHECK(r.force);
  CHECK_FALSE(r.dry_run);

  ParsedCommand next;
  REQUIRE_FALSE(parse({"next", "@daily"}, next));
  const auto& n = next.options_as<NextOptions>();
  CHECK(n.cron == "@daily");
  CHECK(n.tz == "UTC");
  CHECK(n.from.empty());
  CHECK(n.count == 5);
  CHECK(n.config_path == "/etc/tidemark/tidemark.yaml");

  ParsedCommand history;
  REQUIRE_FALSE(parse({"history", "--json"}, history));
  CHECK(history.options_as<HistoryOptions>().pipeline.empty());
  CHECK(history.options_as<HistoryOptions>().limit == 20);
  CHECK(history.options_as<HistoryOptions>().json);

  ParsedCommand status;
  REQUIRE_FALSE(parse({"status"}, status));
  CHECK_FALSE(status.options_as<StatusOptions>().json);

  ParsedCommand verify;
  REQUIRE_FALSE(parse({"verify", "shop"}, verify));
  CHECK(verify.options_as<VerifyOptions>().pipeline == "shop");
  CHECK(verify.options_as<VerifyOptions>().table.empty());
}

TEST_CASE("--config after the command wins over one before it; either beats the default") {
  struct Row {
    std::vector<std::string> args;
    std::string config_path;
  };
  const std::vector<Row> rows = {
      {{"serve"}, "/etc/tidemark/tidemark.yaml"},
      {{"--config", "/a.yaml", "serve"}, "/a.yaml"},
      {{"serve", "--config", "/b.yaml"}, "/b.yaml"},
      {{"--config", "/a.yaml", "serve", "--config", "/b.yaml"}, "/b.yaml"},
  };
  for (const Row& row : rows) {
    ParsedCommand parsed;
    REQUIRE_FALSE(parse(row.args, parsed));
    CHECK(parsed.options_as<ServeOptions>().config_path == row.config_path);
  }
}

TEST_CASE("a parsed command runs its row's handler on its options") {
  ParsedCommand next;
  REQUIRE_FALSE(parse({"next", "30 2 * * *", "--tz", "Europe/Berlin", "--from", "2026-03-28T12:00:00Z", "--count", "2"},
                      next));
  std::ostringstream out, err;
  CHECK(next.run({Instant{}, out, err}) == 0);
  CHECK(out.str() == "2026-03-29T01:00:00Z\n2026-03-30T00:30:00Z\n");

  // validate reads its --config itself and reports the file.
  ParsedCommand validate;
  REQUIRE_FALSE(parse({"validate", "--config", "/nonexistent/tidemark.yaml"}, validate));
  std::ostringstream validate_out, validate_err;
  CHECK(validate.run({Instant{}, validate_out, validate_err}) == 2);
  CHECK(validate_err.str() ==
        "/nonexistent/tidemark.yaml: cannot read file: No such file or directory\n"
        "1 error found; configuration is invalid\n");

  // A database command never starts on a configuration that does not load.
  ParsedCommand status;
  REQUIRE_FALSE(parse({"--config", "/nonexistent/tidemark.yaml", "status"}, status));
  std::ostringstream status_out, status_err;
  CHECK(status.run({Instant{}, status_out, status_err}) == 2);
  CHECK(status_err.str().find("/nonexistent/tidemark.yaml: cannot read file") != std::string::npos);
  CHECK(status_out.str().empty());
}

TEST_CASE("tidemark next prints UTC ISO-8601 instants, one per line, or exits 2") {
  NextOptions cl;
  cl.cron = "30 2 * * *";
  cl.tz = "Europe/Berlin";
  cl.from = "2026-03-28T12:00:00Z";
  cl.count = 2;
  std::ostringstream out, err;
  CHECK(run_next(cl, Instant{}, out, err) == 0);
  CHECK(out.str() == "2026-03-29T01:00:00Z\n2026-03-30T00:30:00Z\n");

  cl.tz = "Mars/Base";
  CHECK(run_next(cl, Instant{}, out, err) == 2);
  CHECK(err.str().find("unknown time zone \"Mars/Base\"") != std::string::npos);
  cl.tz = "UTC";
  cl.cron = "61 * * * *";
  CHECK(run_next(cl, Instant{}, out, err) == 2);
  cl.cron = "* * * * *";
  cl.from = "yesterday";
  CHECK(run_next(cl, Instant{}, out, err) == 2);

  // Without --from it starts at `now`.
  std::ostringstream now_out;
  cl.from.clear();
  cl.count = 1;
  CHECK(run_next(cl, *parse_instant("2026-01-01T00:00:30Z"), now_out, err) == 0);
  CHECK(now_out.str() == "2026-01-01T00:01:00Z\n");
}

// Issue 10, item 6: this printed 10000-01-01T00:00:00Z.
TEST_CASE("regression: tidemark next stops at the end of year 9999 and says so") {
  NextOptions cl;
  cl.cron = "* * * * *";
  cl.from = "9999-12-31T23:58:00Z";
  cl.count = 3;
  std::ostringstream out, err;
  CHECK(run_next(cl, Instant{}, out, err) == 0);
  CHECK(out.str() == "9999-12-31T23:59:00Z\n");
  CHECK(err.str() == "tidemark next: 1 of 3 firings printed: the next falls after the year 9999, past what ISO-8601 dates "
                    "can write\n");
}

}  // namespace tidemark
