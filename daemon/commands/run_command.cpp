#include <ostream>

#include "core/run/cancel_token.h"
#include "daemon/commands/chunk_logger.h"
#include "daemon/commands/command_support.h"
#include "daemon/commands/commands.h"
#include "daemon/commands/exit_code.h"
#include "daemon/commands/interrupt_scope.h"
#include "core/schedule/job_end_chain.h"
#include "daemon/serve/job_log.h"
#include "daemon/serve/job_runner.h"

namespace tidemark {

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
  // The command's output is each job's end: nothing else reports it.
  JobEndChain ends;
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
    // The run's line (old and new watermark, window, rows) is the command's output.
    const JobEnded ended = runner.run_one(load_job(*pipeline, table, RunTrigger::Manual), interrupt);
    out << describe_job(ended) << '\n';
    all_ok = all_ok && ended.summary.status == RunStatus::Success;
  }
  return all_ok ? kExitOk : kExitFailure;
}

}  // namespace tidemark
