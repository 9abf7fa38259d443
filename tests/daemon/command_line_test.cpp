// The command line and the commands that need no database.
#include <doctest/doctest.h>

#include <iostream>
#include <sstream>
#include <vector>

#include "core/instant_text.h"
#include "daemon/command_line.h"
#include "daemon/next_command.h"

namespace tidemark {
namespace {

std::optional<int> parse(std::vector<std::string> args, CommandLine& out) {
  args.insert(args.begin(), "tidemark");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return parse_command_line(static_cast<int>(argv.size()), argv.data(), out);
}

}  // namespace

TEST_CASE("usage errors exit 2, help exits 0, and options land where they belong") {
  CommandLine cl;
  std::ostringstream sink;
  auto* old_out = std::cout.rdbuf(sink.rdbuf());  // keep help text out of the test log
  auto* old_err = std::cerr.rdbuf(sink.rdbuf());
  CHECK(parse({}, cl) == 2);
  CHECK(parse({"bogus"}, cl) == 2);
  CHECK(parse({"run"}, cl) == 2);  // PIPELINE is required
  CHECK(parse({"rewind", "p", "t", "--to", "5"}, cl) == 2);  // --reason is required
  CHECK(parse({"next", "* * * * *", "--count", "0"}, cl) == 2);
  CHECK(parse({"--help"}, cl) == 0);
  CHECK(parse({"status", "--help"}, cl) == 0);
  CHECK(parse({"--version"}, cl) == 0);
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);

  CommandLine run;
  CHECK_FALSE(parse({"run", "shop", "--table", "orders", "--config", "/tmp/t.yaml"}, run));
  CHECK(run.command == "run");
  CHECK(run.pipeline == "shop");
  CHECK(run.table == "orders");
  CHECK(run.config_path == "/tmp/t.yaml");

  CommandLine backfill;
  CHECK_FALSE(parse({"--config", "/x.yaml", "backfill", "p", "--table", "t", "--from", "2026-01-01", "--to",
                     "2026-02-01", "--parallel", "3", "--rerun"},
                    backfill));
  CHECK(backfill.config_path == "/x.yaml");
  CHECK(backfill.parallel == 3);
  CHECK(backfill.rerun);
  CHECK(backfill.from == "2026-01-01");

  CommandLine rewind;
  CHECK_FALSE(parse({"rewind", "p", "t", "--to", "2999-01-01", "--reason", "why", "--force"}, rewind));
  CHECK(rewind.force);
  CHECK_FALSE(rewind.dry_run);
}

TEST_CASE("tidemark next prints UTC ISO-8601 instants, one per line, or exits 2") {
  CommandLine cl;
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
  CommandLine cl;
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
