#include <unistd.h>

#include <ostream>

#include "core/run/cancel_token.h"
#include "core/time/instant_text.h"
#include "daemon/commands/chunk_logger.h"
#include "daemon/commands/command_support.h"
#include "daemon/commands/commands.h"
#include "daemon/commands/exit_code.h"
#include "daemon/commands/interrupt_scope.h"
#include "daemon/commands/progress_line.h"
#include "daemon/pg/data/pg_source.h"
#include "daemon/pg/state/progress_book.h"
#include "daemon/logging.h"
#include "core/schedule/job_end_chain.h"
#include "daemon/serve/job_log.h"
#include "daemon/serve/job_runner.h"

namespace tidemark {
namespace {

// A run by hand goes ahead on a paused table (that is how an operator
// tries a fix before resuming), but says so. Unreadable pauses say
// nothing: the run itself reports a state database it cannot reach.
// On the state session the runs take next from `sessions`.
void say_paused(const Config& config, const PipelineConfig& pipeline, const std::string& only,
                ConnectionPool& sessions, std::ostream& err) {
  PauseSet pauses;
  try {
    pauses = read_pauses(*sessions.acquire(config, config.daemon.state, SessionKind::ReadWrite));
  } catch (const std::exception&) {
    return;
  }
  for (const TableConfig& table : pipeline.tables) {
    if (!only.empty() && table.name != only) continue;
    if (const Pause* pause = pauses.pause_of({pipeline.name, table.name})) {
      err << "tidemark run: " << pipeline.name << "." << table.name << " is paused"
          << (pause->whole_pipeline() ? " with its pipeline" : "") << " since "
          << format_unix_seconds(pause->paused_at) << " by " << pause->paused_by << " ("
          << escape_control_characters(pause->reason) << "); run by hand, it runs now; it stays paused\n";
    }
  }
}

// The rows `table`'s source holds by its statistics, for the progress
// line; nothing for a query's table, or when the source cannot say.
std::optional<std::int64_t> source_estimate(const Config& config, const PipelineConfig& pipeline,
                                            const TableConfig& table) {
  if (!table.source_table) return std::nullopt;
  try {
    return estimated_rows(*connect_to_source(config, pipeline.source), *table.source_table);
  } catch (const std::exception&) {
    return std::nullopt;  // the run itself says what is wrong with the source
  }
}

}  // namespace

int run_run(const ConfigPtr& config, const RunOptions& command_line, std::ostream& out, std::ostream& err) {
  const PipelineConfig* pipeline = config->find_pipeline(command_line.pipeline);
  if (pipeline == nullptr) {
    err << "tidemark run: no pipeline named \"" << command_line.pipeline << "\"\n";
    return kExitUsage;
  }
  if (!command_line.table.empty() && pipeline->find_table(command_line.table) == nullptr) {
    err << "tidemark run: pipeline " << pipeline->name << " has no table \"" << command_line.table << "\"\n";
    return kExitUsage;
  }
  if (const auto exit_code = prepare_state(*config, "run", err)) return *exit_code;
  // SIGTERM or Ctrl-C cancels the run in flight through its token, so it
  // closes its run row (failed, with the signal) before the process exits,
  // rather than leaving it `running` until a later run calls it abandoned.
  CancelToken interrupt;
  const InterruptScope interrupt_scope(interrupt);

  ChunkLogger chunk_logger;
  // The tables of one pipeline run one after another on the same sessions.
  ConnectionPool sessions(1, std::chrono::seconds(60));
  say_paused(*config, *pipeline, command_line.table, sessions, err);
  // The command's output is each job's end: nothing else reports it. While
  // a job copies, its progress shows on the terminal (or in the log).
  ProgressLine progress(err, ::isatty(STDERR_FILENO) == 1);
  std::unique_ptr<PgConnection> progress_state;  // the progress line's own session, opened at its first record
  progress.set_record([&](const TableKey& table, std::int64_t rows, std::int64_t bytes) {
    try {
      if (!progress_state) progress_state = connect_to(*config, config->daemon.state);
      (void)ProgressBook(*progress_state).write({CopyProgress{table, rows, bytes, 0}});
    } catch (const std::exception&) {
      progress_state.reset();  // `status` goes without it; the run does not depend on it
    }
  });
  JobEndChain ends({&progress});
  JobRunner runner(config, chunk_logger, sole_owner(), ends, JobSessions{&sessions});
  bool all_ok = true;
  for (const TableConfig& table : pipeline->tables) {
    if (!command_line.table.empty() && table.name != command_line.table) continue;
    if (interrupt.cancelled()) {
      err << "tidemark run: " << interrupt.reason() << "; " << pipeline->name << "." << table.name
          << " was not started\n";
      all_ok = false;
      continue;
    }
    progress.set_estimate([&config, pipeline, &table] { return source_estimate(*config, *pipeline, table); });
    // The run's line (old and new watermark, window, rows) is the command's output.
    const JobEnded ended = runner.run_one(load_job(*pipeline, table, RunTrigger::Manual), interrupt);
    out << describe_job(ended) << '\n';
    all_ok = all_ok && ended.summary.status == RunStatus::Success;
  }
  return all_ok ? kExitOk : kExitFailure;
}

}  // namespace tidemark
