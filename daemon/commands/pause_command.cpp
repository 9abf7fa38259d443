#include <ostream>

#include "core/text/plain_text.h"
#include "core/time/instant_text.h"
#include "daemon/commands/command_support.h"
#include "daemon/commands/commands.h"
#include "daemon/commands/exit_code.h"
#include "daemon/logging.h"
#include "daemon/pg/state/pause_book.h"

namespace tidemark {
namespace {

// The configured pipeline, and the table when one is named; else what to
// say (exit 2). Validated here so that a typo pauses nothing.
const PipelineConfig* scope_or_say(const Config& config, const std::string& command, const std::string& pipeline,
                                   const std::string& table, std::ostream& err) {
  const PipelineConfig* p = config.find_pipeline(pipeline);
  if (p == nullptr) {
    err << "tidemark " << command << ": no pipeline named \"" << pipeline << "\"\n";
    return nullptr;
  }
  if (!table.empty() && p->find_table(table) == nullptr) {
    err << "tidemark " << command << ": pipeline " << pipeline << " has no table \"" << table << "\"\n";
    return nullptr;
  }
  return p;
}

std::string since_text(const Pause& pause) {
  return "since " + format_unix_seconds(pause.paused_at) + " by " + pause.paused_by + ": " +
         escape_control_characters(pause.reason);
}

}  // namespace

int run_pause(const ConfigPtr& config, const PauseOptions& command_line, std::ostream& out, std::ostream& err) {
  if (is_blank(command_line.reason)) {
    err << "tidemark pause: --reason must say why; it is shown in status and kept forever in "
           "tidemark.pause_events\n";
    return kExitUsage;
  }
  if (!scope_or_say(*config, "pause", command_line.pipeline, command_line.table, err)) return kExitUsage;
  if (const auto exit_code = prepare_state(*config, "pause", err)) return *exit_code;
  try {
    const auto state = connect_to(*config, config->daemon.state);
    Pause asked;
    asked.pipeline = command_line.pipeline;
    asked.table = command_line.table;
    asked.reason = command_line.reason;
    asked.paused_by = operating_system_user();
    const auto written = PauseBook(*state).pause(asked);
    if (!written) throw std::runtime_error(written.error());
    const Pause& stored = written->pause;
    if (written->already_paused) {
      out << stored.scope() << " was already paused, since " << format_unix_seconds(stored.paused_at)
          << "; its reason is now: " << escape_control_characters(stored.reason) << '\n';
    } else {
      out << "paused " << stored.scope() << " " << since_text(stored) << '\n'
          << "every member of the fleet stops firing it; a run in flight finishes; `tidemark run` still runs it by "
             "hand\n";
    }
  } catch (const std::exception& e) {
    err << "tidemark pause: " << e.what() << '\n';
    return kExitFailure;
  }
  return kExitOk;
}

int run_resume(const ConfigPtr& config, const ResumeOptions& command_line, std::ostream& out, std::ostream& err) {
  // A pipeline removed from the files may still hold a pause: resuming it
  // by name must still work, so only a named table is checked.
  if (!command_line.table.empty() &&
      !scope_or_say(*config, "resume", command_line.pipeline, command_line.table, err)) {
    return kExitUsage;
  }
  if (const auto exit_code = prepare_state(*config, "resume", err)) return *exit_code;
  try {
    const auto state = connect_to(*config, config->daemon.state);
    PauseBook book(*state);
    const auto ended =
        book.resume(command_line.pipeline,
                    command_line.table.empty() ? std::nullopt : std::optional<std::string>(command_line.table),
                    command_line.catch_up, operating_system_user());
    if (!ended) throw std::runtime_error(ended.error());
    for (const Pause& pause : *ended) out << "resumed " << pause.scope() << " (paused " << since_text(pause) << ")\n";
    if (!command_line.table.empty()) {
      // A table's own resume leaves its pipeline's pause in place.
      const auto now = book.read(std::nullopt);
      if (!now) throw std::runtime_error(now.error());
      if (const Pause* held = now->pauses.pause_of({command_line.pipeline, command_line.table})) {
        err << "tidemark resume: " << command_line.pipeline << "." << command_line.table
            << " still does not fire: " << held->scope() << " is paused " << since_text(*held)
            << "; `tidemark resume " << command_line.pipeline << "` resumes the whole pipeline\n";
        return kExitFailure;
      }
    }
    if (ended->empty()) {
      out << "nothing to resume: "
          << (command_line.table.empty() ? "pipeline " + command_line.pipeline
                                         : command_line.pipeline + "." + command_line.table)
          << " is not paused\n";
    } else if (command_line.catch_up) {
      out << "each table that missed a firing while paused runs once now; the others at their next firing\n";
    } else {
      out << "each table fires at its next firing; the firings missed while paused are not made up "
             "(--catch-up runs them once now)\n";
    }
  } catch (const std::exception& e) {
    err << "tidemark resume: " << e.what() << '\n';
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace tidemark
