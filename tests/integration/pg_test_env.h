// Fresh databases on the throwaway PostgreSQL that scripts/test starts
// (PGHOST, PGPORT, PGUSER), and a Config that points tidemark at them.
// Each PgTestEnv creates its own databases and drops them when it ends.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/config/config_model.h"
#include "core/run/cancel_token.h"
#include "daemon/commands/chunk_logger.h"
#include "daemon/commands/commands.h"
#include "daemon/pg/libpq/pg_connection.h"
#include "core/schedule/job_end_chain.h"
#include "daemon/serve/job_runner.h"

namespace tidemark::testing {

// The servers scripts/test starts: the test server, and the primary of
// the hot standby (start_standby), which only the standby's tests write to.
enum class TestServer { Main, StandbyPrimary };

// A DSN for `database` on a test server. Fails the test when the
// environment does not name one.
std::string test_dsn(const std::string& database, TestServer server = TestServer::Main);

// Whether `condition` holds within `timeout`, asking again every 20 ms: the
// wait for an event a test can observe (a session gone, a lock waited on),
// where a fixed sleep would guess how long it takes.
bool eventually(std::chrono::milliseconds timeout, const std::function<bool()>& condition);

// Waits (up to 90 s) until every transaction that began writing on
// `source`'s server before now has ended. A snapshot's horizon is the
// oldest writer still running on the whole server: a long one of another
// test beside this one (a stalled load, say) would make every row a "row
// written since", and a test of that first look would see the whole diff.
void await_older_writers(PgConnection& source);

// Rows stamped within kStartReportMargin of the source clock wait for a
// later run; tests that expect a fresh row loaded now wait that long.
void wait_past_start_report_margin();

class PgTestEnv {
 public:
  // Creates databases "<prefix>_source" and "<prefix>_target" (and
  // "<prefix>_state" when state_in_target is false) on `server`.
  explicit PgTestEnv(bool state_in_target = true, TestServer server = TestServer::Main);
  ~PgTestEnv();

  PgConnection& source() { return *source_; }
  PgConnection& target() { return *target_; }
  // The state database's connection (the target's when they are one).
  PgConnection& state() { return state_ ? *state_ : *target_; }

  // The DSN of this env's database `role` ("source", "target", "state").
  std::string dsn(const std::string& role) const;
  // Adds a connection to the daemon file: `fields` is the inside of its
  // YAML map, e.g. `dsn: "...", primary: source`.
  void add_connection(const std::string& name, const std::string& fields);
  // Points connection `name` (source/target/state) at another DSN.
  void set_dsn(const std::string& name, const std::string& dsn);

  // A Config with connections source/target/state and one pipeline file.
  std::shared_ptr<const Config> config(const std::string& pipeline_yaml) const;

  // The same configuration written to files in a fresh folder (removed
  // with this env), for the commands that read --config; returns the
  // daemon file's path.
  std::string write_config_files(const std::string& pipeline_yaml);
  // ... with a pipeline file for each of `pipeline_yamls`, replacing those
  // written before.
  std::string write_config_files(const std::vector<std::string>& pipeline_yamls);

  // Every row of `query`, each as its columns joined with '|'.
  static std::vector<std::string> rows(PgConnection& connection, const std::string& query);

 private:
  std::string daemon_yaml() const;

  std::string prefix_;
  std::string config_dir_;
  std::string extra_connections_;
  std::map<std::string, std::string> dsn_overrides_;
  TestServer server_;
  bool state_in_target_;
  std::unique_ptr<PgConnection> admin_;
  std::unique_ptr<PgConnection> source_;
  std::unique_ptr<PgConnection> target_;
  std::unique_ptr<PgConnection> state_;
};

// A login role of the test server, named after the env's databases, that
// the env's source connection is pointed at; dropped, with the grants it
// holds in the source, before the env's databases go (declare it after
// the env).
class SourceRole {
 public:
  // Creates the role "<source database>_<suffix>" and points connection
  // "source" at it; grant it what it reads.
  SourceRole(PgTestEnv& env, const std::string& suffix);
  ~SourceRole();
  SourceRole(const SourceRole&) = delete;
  SourceRole& operator=(const SourceRole&) = delete;

  const std::string& name() const { return name_; }

 private:
  PgTestEnv& env_;
  std::string name_;
};

// Runs tables of a configuration the way the daemon does (JobRunner, on
// sessions from a pool that lives as long as this), after applying the
// state schema to the env's state database.
class TableRuns {
 public:
  TableRuns(PgTestEnv& env, std::shared_ptr<const Config> config);

  // `hook`, when set, is called at each chunk step; throwing there is a crash.
  JobEnded run(const std::string& pipeline, const std::string& table, RunTrigger trigger = RunTrigger::Manual,
                   std::function<void(ChunkStep)> hook = nullptr);

  // The pool the runs' sessions come from (pool().opened() counts new ones).
  ConnectionPool& pool() { return pool_; }
  // What the runs read once and share, as serve's runs do.
  SharedReads& shared() { return shared_; }

 private:
  std::shared_ptr<const Config> config_;
  ChunkLogger observer_;
  JobEndChain ends_;
  CancelToken cancel_;
  ConnectionPool pool_{2, std::chrono::seconds(60)};
  SharedReads shared_;
};

// Runs commands the way the binary does: loads config_path (exit 2 with
// the errors when invalid) and captures what the command prints.
struct CommandRunner {
  std::string config_path;
  std::ostringstream out;
  std::ostringstream err;

  // Runs `command` on `options`, with config_path as their --config.
  template <class Options>
  int run(DatabaseCommand<Options> command, Options options) {
    options.config_path = config_path;
    return run_loaded(options.config_path,
                      [&](const ConfigPtr& config) { return command(config, options, out, err); });
  }

 private:
  int run_loaded(const std::string& path, const std::function<int(const ConfigPtr&)>& command);
};

}  // namespace tidemark::testing
