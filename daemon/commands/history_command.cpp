#include <fmt/format.h>
#include <fmt/ostream.h>

#include <nlohmann/json.hpp>
#include <ostream>

#include "core/watermark/table_reason.h"
#include "daemon/commands/command_support.h"
#include "daemon/commands/commands.h"
#include "daemon/commands/exit_code.h"
#include "daemon/logging.h"
#include "daemon/pg/state/state_reader.h"

namespace tidemark {

int run_history(const ConfigPtr& config, const HistoryOptions& command_line, std::ostream& out, std::ostream& err) {
  nlohmann::json runs = nlohmann::json::array();
  try {
    const auto state = connect_to(*config, config->daemon.state);
    if (state_schema_exists_or_say(*state, *config, err)) {
      const auto given = [](const std::string& value) {
        return value.empty() ? std::nullopt : std::optional<std::string>(value);
      };
      const auto recent = StateReader(*state).recent_runs(
          RunFilter{given(command_line.pipeline), given(command_line.table), given(command_line.status)},
          command_line.limit);
      if (!recent) throw std::runtime_error(recent.error());
      const auto text = [](const std::optional<std::string>& value) {
        return value ? nlohmann::json(*value) : nlohmann::json();
      };
      const auto number = [](const auto& value) { return value ? nlohmann::json(*value) : nlohmann::json(); };
      for (const RunRecord& run : *recent) {
        runs.push_back({{"run_id", run.run_id},
                        {"pipeline", run.pipeline},
                        {"table", run.table},
                        {"trigger", run.trigger},
                        {"status", run.status},
                        {"started_at", run.started_at},
                        {"duration_seconds", number(run.duration_seconds)},
                        {"window_lo", text(run.window_lo)},
                        {"window_hi", text(run.window_hi)},
                        {"watermark_before", text(run.watermark_before)},
                        {"watermark_after", text(run.watermark_after)},
                        {"rows_read", run.rows_read},
                        {"rows_written", run.rows_written},
                        {"rows_deleted", number(run.rows_deleted)},
                        {"rows_missing", number(run.rows_missing)},
                        {"rows_changed", number(run.rows_changed)},
                        {"unseen_changes", number(run.unseen_changes)},
                        {"rewrite_reason", text(run.rewrite_reason)},
                        {"held_by", text(run.held_by)},
                        {"error", text(run.error)},
                        {"error_kind", text(run.error_kind)},
                        {"host", text(run.host)},
                        {"pid", number(run.pid)}});
      }
    }
  } catch (const std::exception& e) {
    err << "tidemark history: " << e.what() << '\n';
    return kExitFailure;
  }
  if (command_line.json) {
    out << runs.dump(2) << '\n';
    return kExitOk;
  }
  fmt::print(out, "{:>7} {:<30} {:<9} {:<8} {:<20} {:>9} {:>9} {:>9}  {}\n", "RUN", "TABLE", "TRIGGER", "STATUS",
             "STARTED", "SECONDS", "READ", "WRITTEN", "WATERMARK / ERROR");
  for (const auto& run : runs) {
    // A reconcile moves no watermark: its counts are what it did.
    const bool reconcile = !run["rows_deleted"].is_null() && run["error"].is_null();
    // A partition written again says why; a firing that wrote nothing, what held it.
    const bool rewrite = !run["rewrite_reason"].is_null() && run["error"].is_null();
    const bool held = run["watermark_after"].is_null() && run["window_lo"].is_null() && !run["held_by"].is_null() &&
                      run["error"].is_null();
    const std::string detail =
        rewrite ? "written again: " + escape_control_characters(run["rewrite_reason"].get<std::string>())
        : held  ? held_back_text(run["held_by"].get<std::string>())
        : reconcile ? fmt::format("deleted {}, missing {}, changed {}", run["rows_deleted"].get<std::int64_t>(),
                                run["rows_missing"].is_null() ? 0 : run["rows_missing"].get<std::int64_t>(),
                                run["rows_changed"].is_null() ? 0 : run["rows_changed"].get<std::int64_t>())
        : !run["error"].is_null()
            ? escape_control_characters(run["error"].get<std::string>())
            : (run["watermark_before"].is_null() ? std::string("(none)") : run["watermark_before"].get<std::string>()) +
                  " -> " +
                  (run["watermark_after"].is_null() ? std::string("(none)") : run["watermark_after"].get<std::string>());
    fmt::print(out, "{:>7} {:<30} {:<9} {:<8} {:<20} {:>9} {:>9} {:>9}  {}\n", run["run_id"].get<std::int64_t>(),
               run["pipeline"].get<std::string>() + "." + run["table"].get<std::string>(),
               run["trigger"].get<std::string>(), run["status"].get<std::string>(),
               run["started_at"].get<std::string>(),
               run["duration_seconds"].is_null() ? "-" : fmt::format("{:.3f}", run["duration_seconds"].get<double>()),
               run["rows_read"].get<std::int64_t>(), run["rows_written"].get<std::int64_t>(), detail);
  }
  return kExitOk;
}

}  // namespace tidemark
