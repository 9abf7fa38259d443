// The database commands of `tidemark` (SPEC §4), each with the options it
// takes. Each is given the configuration loaded and validated once (from
// its options' config_path, by the command table), and returns the process
// exit code: 0 success, 1 runtime failure, 2 usage or configuration error.
// Output goes to `out`, problems to `err`; logs go through spdlog.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "core/config/config_model.h"
#include "core/discover/pipeline_discovery.h"
#include "daemon/commands/common_options.h"

namespace tidemark {

using ConfigPtr = std::shared_ptr<const Config>;

// The shape of a database command taking `Options`.
template <class Options>
using DatabaseCommand = int (*)(const ConfigPtr& config, const Options& command_line, std::ostream& out,
                                std::ostream& err);

// `serve`: config_path is also the file a reload reads again.
struct ServeOptions : CommonOptions {};
int run_serve(const ConfigPtr& config, const ServeOptions& command_line, std::ostream& out, std::ostream& err);

struct MigrateOptions : CommonOptions {};
int run_migrate(const ConfigPtr& config, const MigrateOptions& command_line, std::ostream& out, std::ostream& err);

struct RunOptions : CommonOptions {
  std::string pipeline;
  std::string table;  // empty: every table of the pipeline
};
int run_run(const ConfigPtr& config, const RunOptions& command_line, std::ostream& out, std::ostream& err);

// `status`: every table, or those the filters keep (all of them must hold).
struct StatusOptions : CommonOptions {
  std::string pipeline;  // empty: every pipeline
  std::string table;     // a glob (core/text/glob.h); empty: every table
  bool stale = false;    // only stale (or ahead) tables
  bool failing = false;  // only tables whose last run, or reconcile, failed
  bool paused = false;   // only paused tables
  bool waiting = false;  // only tables held back by the horizon or an input
  bool json = false;
};
int run_status(const ConfigPtr& config, const StatusOptions& command_line, std::ostream& out, std::ostream& err);

struct FleetOptions : CommonOptions {
  bool json = false;
};
int run_fleet(const ConfigPtr& config, const FleetOptions& command_line, std::ostream& out, std::ostream& err);

struct HistoryOptions : CommonOptions {
  std::string pipeline;  // empty: every pipeline
  std::string table;     // a glob; empty: every table
  std::string status;    // running, success or failed; empty: every run
  int limit = 20;
  bool json = false;
};
int run_history(const ConfigPtr& config, const HistoryOptions& command_line, std::ostream& out, std::ostream& err);

struct BackfillOptions : CommonOptions {
  std::string pipeline;
  std::string table;
  std::string from;
  std::string to;
  int parallel = 1;
  bool rerun = false;
  long max_partitions = 100000;  // more is refused as a likely typo
};
int run_backfill(const ConfigPtr& config, const BackfillOptions& command_line, std::ostream& out, std::ostream& err);

struct VerifyOptions : CommonOptions {
  std::string pipeline;
  std::string table;  // empty: every table of the pipeline
  std::size_t keys = 0;  // name the first this many differing keys of each day that differs
};
int run_verify(const ConfigPtr& config, const VerifyOptions& command_line, std::ostream& out, std::ostream& err);

struct ReconcileOptions : CommonOptions {
  std::string pipeline;
  std::string table;  // empty: every table with deletes:
  bool dry_run = false;
};
int run_reconcile(const ConfigPtr& config, const ReconcileOptions& command_line, std::ostream& out,
                  std::ostream& err);

struct RewindOptions : CommonOptions {
  std::string pipeline;
  std::string table;
  std::string to;
  std::string reason;
  bool dry_run = false;
  bool force = false;  // past the source's clock
};
int run_rewind(const ConfigPtr& config, const RewindOptions& command_line, std::ostream& out, std::ostream& err);

// `pause` and `resume` (daemon/pg/state/pause_book.h): stored, audited,
// obeyed by every member of the fleet.
struct PauseOptions : CommonOptions {
  std::string pipeline;
  std::string table;  // empty: the whole pipeline
  std::string reason;
};
int run_pause(const ConfigPtr& config, const PauseOptions& command_line, std::ostream& out, std::ostream& err);

struct ResumeOptions : CommonOptions {
  std::string pipeline;
  std::string table;  // empty: the pipeline's pause and every one of its tables'
  bool catch_up = false;  // run once now what missed a firing while paused
};
int run_resume(const ConfigPtr& config, const ResumeOptions& command_line, std::ostream& out, std::ostream& err);

// `discover`: reads a source's catalog (read only) and writes pipeline
// files that validate: key, cursor or mode: snapshot, each choice
// explained; to `out`, or one file per schema into write_dir.
struct DiscoverOptions : CommonOptions {
  std::string source;                // a connection name
  std::vector<std::string> schemas;  // empty: every schema but the system ones
  std::string target_schema;         // empty: each source schema's own name
  std::string target;                // a connection name; empty: the state connection
  std::string write_dir;             // empty: print to out
  bool force = false;                // replace files that exist
  std::int64_t snapshot_limit = DiscoverPolicy{}.snapshot_limit;  // estimated rows above which a cursor is chosen
};
int run_discover(const ConfigPtr& config, const DiscoverOptions& command_line, std::ostream& out, std::ostream& err);

// `healthcheck`: asks the running daemon's /healthz (or /readyz) on
// metrics.listen; exit 0 on 200, 1 otherwise. The container image's
// HEALTHCHECK, since the image has no HTTP client of its own.
struct HealthcheckOptions : CommonOptions {
  bool ready = false;  // ask /readyz instead
};
int run_healthcheck(const ConfigPtr& config, const HealthcheckOptions& command_line, std::ostream& out,
                    std::ostream& err);

}  // namespace tidemark
