#include "pg_test_env.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/config/config_parser.h"
#include "core/watermark/safe_horizon.h"
#include "daemon/commands/command_support.h"
#include "daemon/pg/state/state_schema.h"

namespace tidemark::testing {
namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::string unique_prefix() {
  static std::atomic<int> counter{0};
  return "it" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
}

}  // namespace

void wait_past_start_report_margin() {
  std::this_thread::sleep_for(std::chrono::microseconds(kStartReportMargin) + std::chrono::milliseconds(50));
}

bool eventually(std::chrono::milliseconds timeout, const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

void await_older_writers(PgConnection& source) {
  const std::string now = PgTestEnv::rows(source, "select pg_current_xact_id()")[0];
  REQUIRE(eventually(std::chrono::seconds(90), [&] {
    return PgTestEnv::rows(source, "select pg_snapshot_xmin(pg_current_snapshot()) > '" + now + "'::xid8")[0] == "t";
  }));
}

std::string test_dsn(const std::string& database, TestServer server) {
  if (server == TestServer::StandbyPrimary) {
    const std::string host = env("TIDEMARK_STANDBY_HOST");
    REQUIRE_MESSAGE(!host.empty(), "scripts/test starts a hot standby and its primary (start_standby)");
    return "host=" + host + " port=" + env("TIDEMARK_STANDBY_PRIMARY_PORT") + " dbname=" + database + " user=postgres";
  }
  const std::string host = env("PGHOST");
  REQUIRE_MESSAGE(!host.empty(), "integration tests run through scripts/test, which starts their PostgreSQL");
  std::string dsn = "host=" + host + " dbname=" + database;
  if (!env("PGPORT").empty()) dsn += " port=" + env("PGPORT");
  if (!env("PGUSER").empty()) dsn += " user=" + env("PGUSER");
  return dsn;
}

PgTestEnv::PgTestEnv(bool state_in_target, TestServer server)
    : prefix_(unique_prefix()), server_(server), state_in_target_(state_in_target) {
  admin_ = std::make_unique<PgConnection>(test_dsn("postgres", server_), "admin");
  // A copy of the template's files, not its pages through the WAL (15's
  // default): a third of the time for a small database, which every case
  // makes three of.
  const std::string strategy = admin_->server_major_version() >= 15 ? " strategy file_copy" : "";
  for (const char* role : {"source", "target", "state"}) {
    if (std::string(role) == "state" && state_in_target_) continue;
    admin_->exec("create database " + prefix_ + "_" + role + strategy);
  }
  source_ = std::make_unique<PgConnection>(dsn("source"), "source");
  target_ = std::make_unique<PgConnection>(dsn("target"), "target");
  if (!state_in_target_) state_ = std::make_unique<PgConnection>(dsn("state"), "state");
}

PgTestEnv::~PgTestEnv() {
  if (!config_dir_.empty()) std::filesystem::remove_all(config_dir_);
  source_.reset();
  target_.reset();
  state_.reset();
  for (const char* role : {"source", "target", "state"}) {
    try {
      admin_->exec("drop database if exists " + prefix_ + "_" + role + " with (force)");
    } catch (const PgError&) {
      // Left for the throwaway server's teardown.
    }
  }
}

std::string PgTestEnv::dsn(const std::string& role) const { return test_dsn(prefix_ + "_" + role, server_); }

void PgTestEnv::add_connection(const std::string& name, const std::string& fields) {
  extra_connections_ += "  " + name + ": { " + fields + " }\n";
}

void PgTestEnv::set_dsn(const std::string& name, const std::string& dsn) { dsn_overrides_[name] = dsn; }

std::string PgTestEnv::daemon_yaml() const {
  const auto line = [&](const std::string& name) {
    const auto over = dsn_overrides_.find(name);
    return "  " + name + ": { dsn: \"" + (over != dsn_overrides_.end() ? over->second : dsn(name)) + "\" }\n";
  };
  std::string daemon_yaml = "state: " + std::string(state_in_target_ ? "target" : "state") + "\nconnections:\n";
  daemon_yaml += line("source") + line("target");
  if (!state_in_target_) daemon_yaml += line("state");
  return daemon_yaml + extra_connections_;
}

std::string PgTestEnv::write_config_files(const std::string& pipeline_yaml) {
  return write_config_files(std::vector<std::string>{pipeline_yaml});
}

std::string PgTestEnv::write_config_files(const std::vector<std::string>& pipeline_yamls) {
  if (config_dir_.empty()) {
    char pattern[] = "/tmp/tidemark-it-XXXXXX";
    config_dir_ = ::mkdtemp(pattern);
  }
  std::filesystem::remove_all(config_dir_ + "/pipelines");
  std::filesystem::create_directories(config_dir_ + "/pipelines");
  std::ofstream(config_dir_ + "/tidemark.yaml") << daemon_yaml();
  for (std::size_t i = 0; i < pipeline_yamls.size(); ++i) {
    const std::string name = i == 0 ? "pipeline" : "pipeline" + std::to_string(i + 1);
    std::ofstream(config_dir_ + "/pipelines/" + name + ".yaml") << pipeline_yamls[i];
  }
  return config_dir_ + "/tidemark.yaml";
}

std::shared_ptr<const Config> PgTestEnv::config(const std::string& pipeline_yaml) const {
  const auto daemon = parse_daemon_config({"tidemark.yaml", daemon_yaml()});
  REQUIRE(daemon.value);
  const auto parsed = parse_config(*daemon.value, {{"pipeline.yaml", pipeline_yaml}});
  for (const auto& e : parsed.errors) MESSAGE(e.to_string());
  REQUIRE(parsed.value);
  return std::make_shared<const Config>(*parsed.value);
}

std::vector<std::string> PgTestEnv::rows(PgConnection& connection, const std::string& query) {
  const PgResult r = connection.exec(query);
  std::vector<std::string> out;
  const int columns = r.columns();
  for (int i = 0; i < r.rows(); ++i) {
    std::string row;
    for (int c = 0; c < columns; ++c) row += (c ? "|" : "") + (r.is_null(i, c) ? std::string("NULL") : r.text(i, c));
    out.push_back(row);
  }
  return out;
}

SourceRole::SourceRole(PgTestEnv& env, const std::string& suffix) : env_(env) {
  name_ = PgTestEnv::rows(env.source(), "select current_database() || '_" + suffix + "'").at(0);
  env.source().exec("create role " + name_ + " login");
  env.set_dsn("source", env.dsn("source") + " user=" + name_);
}

SourceRole::~SourceRole() {
  env_.source().exec("drop owned by " + name_);
  env_.source().exec("drop role " + name_);
}

TableRuns::TableRuns(PgTestEnv& env, std::shared_ptr<const Config> config) : config_(std::move(config)) {
  migrate_state_schema(env.state());
}

JobEnded TableRuns::run(const std::string& pipeline, const std::string& table, RunTrigger trigger,
                            std::function<void(ChunkStep)> hook) {
  const PipelineConfig* p = config_->find_pipeline(pipeline);
  REQUIRE(p != nullptr);
  const TableConfig* t = p->find_table(table);
  REQUIRE(t != nullptr);
  JobRunner runner(config_, observer_, sole_owner(), ends_, JobSessions{&pool_, &shared_});
  if (hook) runner.set_fault_hook(std::move(hook));
  return runner.run_one(load_job(*p, *t, trigger), cancel_);
}

int CommandRunner::run_loaded(const std::string& path, const std::function<int(const ConfigPtr&)>& command) {
  out.str("");
  err.str("");
  const auto config = load_config_or_report(path, err);
  if (!config) return 2;
  return command(config);
}

}  // namespace tidemark::testing
