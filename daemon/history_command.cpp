#include <fmt/format.h>
#include <fmt/ostream.h>

#include <nlohmann/json.hpp>
#include <ostream>

#include "daemon/command_support.h"
#include "daemon/commands.h"
#include "daemon/exit_code.h"
#include "daemon/logging.h"

namespace tidemark {

int run_history(const ConfigPtr& config, const HistoryOptions& command_line, std::ostream& out, std::ostream& err) {
  nlohmann::json runs = nlohmann::json::array();
  try {
    const auto state = connect_to(*config, config->daemon.state);
    if (state_schema_exists_or_say(*state, *config, err)) {
      const PgResult r = state->exec(
          "select run_id, pipeline, table_name, trigger, status,"
          " to_char(started_at at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
          " extract(epoch from finished_at - started_at)::numeric(12,3)::text,"
          " window_lo, window_hi, watermark_before, watermark_after, rows_read, rows_written, error, host, pid"
          " from tidemark.runs where ($1::text is null or pipeline = $1) order by run_id desc limit $2",
          {command_line.pipeline.empty() ? std::nullopt : std::optional<std::string>(command_line.pipeline),
           std::to_string(command_line.limit)});
      const auto text = [&](int row, int column) {
        return r.is_null(row, column) ? nlohmann::json() : nlohmann::json(r.text(row, column));
      };
      for (int i = 0; i < r.rows(); ++i) {
        runs.push_back({{"run_id", r.integer(i, 0)},
                        {"pipeline", r.text(i, 1)},
                        {"table", r.text(i, 2)},
                        {"trigger", r.text(i, 3)},
                        {"status", r.text(i, 4)},
                        {"started_at", r.text(i, 5)},
                        {"duration_seconds", r.is_null(i, 6) ? nlohmann::json() : nlohmann::json(std::stod(r.text(i, 6)))},
                        {"window_lo", text(i, 7)},
                        {"window_hi", text(i, 8)},
                        {"watermark_before", text(i, 9)},
                        {"watermark_after", text(i, 10)},
                        {"rows_read", r.integer(i, 11)},
                        {"rows_written", r.integer(i, 12)},
                        {"error", text(i, 13)},
                        {"host", text(i, 14)},
                        {"pid", r.is_null(i, 15) ? nlohmann::json() : nlohmann::json(r.integer(i, 15))}});
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
  fmt::print(out, "{:>7} {:<30} {:<8} {:<8} {:<20} {:>9} {:>9} {:>9}  {}\n", "RUN", "TABLE", "TRIGGER", "STATUS",
             "STARTED", "SECONDS", "READ", "WRITTEN", "WATERMARK / ERROR");
  for (const auto& run : runs) {
    const std::string detail =
        !run["error"].is_null()
            ? escape_control_characters(run["error"].get<std::string>())
            : (run["watermark_before"].is_null() ? std::string("(none)") : run["watermark_before"].get<std::string>()) +
                  " -> " +
                  (run["watermark_after"].is_null() ? std::string("(none)") : run["watermark_after"].get<std::string>());
    fmt::print(out, "{:>7} {:<30} {:<8} {:<8} {:<20} {:>9} {:>9} {:>9}  {}\n", run["run_id"].get<std::int64_t>(),
               run["pipeline"].get<std::string>() + "." + run["table"].get<std::string>(),
               run["trigger"].get<std::string>(), run["status"].get<std::string>(),
               run["started_at"].get<std::string>(),
               run["duration_seconds"].is_null() ? "-" : fmt::format("{:.3f}", run["duration_seconds"].get<double>()),
               run["rows_read"].get<std::int64_t>(), run["rows_written"].get<std::int64_t>(), detail);
  }
  return kExitOk;
}

}  // namespace tidemark
