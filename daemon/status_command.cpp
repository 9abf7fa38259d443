#include <fmt/format.h>
#include <fmt/ostream.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>

#include "core/cursor_value.h"
#include "core/duration.h"
#include "core/instant_text.h"
#include "daemon/command_support.h"
#include "daemon/commands.h"
#include "core/safe_horizon.h"
#include "daemon/exit_code.h"

namespace tidemark {
namespace {

struct TableState {
  std::optional<std::string> value;
  std::optional<std::string> value_type;
  std::optional<std::int64_t> moved_at;  // Unix seconds
  std::optional<std::int64_t> run_id;
  std::optional<std::string> run_status;
  std::optional<std::int64_t> run_started_at;
  std::optional<std::int64_t> run_finished_at;
  std::optional<std::int64_t> run_rows_written;
  std::optional<std::string> run_error;
  // From the latest finished run: its safe horizon.
  std::optional<double> horizon_lag;
  std::optional<std::string> held_by;
  bool ahead = false;
  std::optional<std::int64_t> null_cursor_rows;
};

std::optional<std::int64_t> optional_integer(const PgResult& r, int row, int column) {
  if (r.is_null(row, column)) return std::nullopt;
  return r.integer(row, column);
}

std::string iso(std::int64_t unix_seconds) { return format_instant(Instant(std::chrono::seconds(unix_seconds))); }

// The watermark as whole Unix seconds; nothing for integer cursors.
std::optional<std::int64_t> watermark_seconds(const TableState& s) {
  if (!s.value || !s.value_type) return std::nullopt;
  const auto value = cursor_from_stored(*s.value_type, *s.value);
  const auto seconds = value ? cursor_unix_seconds(*value) : std::nullopt;
  if (!seconds) return std::nullopt;
  return static_cast<std::int64_t>(std::floor(*seconds));
}

std::string human_age(std::int64_t seconds) {
  if (seconds < 0) return "-" + human_age(-seconds);
  if (seconds < 120) return std::to_string(seconds) + "s";
  if (seconds < 7200) return std::to_string(seconds / 60) + "m";
  if (seconds < 2 * 86400) return std::to_string(seconds / 3600) + "h";
  return std::to_string(seconds / 86400) + "d";
}

}  // namespace

int run_status(const ConfigPtr& config, const StatusOptions& command_line, std::ostream& out, std::ostream& err) {
  std::map<std::pair<std::string, std::string>, TableState> states;
  std::int64_t now = 0;
  try {
    const auto state = connect_to(*config, config->daemon.state);
    if (state_schema_exists_or_say(*state, *config, err)) {
      // One query: each configured table's watermark, latest run and latest
      // finished run (for its horizon), and the state database's clock (a
      // row of nulls when no table is configured). Each lookup is one probe
      // of runs_by_table, so the cost follows the tables, not the history.
      nlohmann::json tables = nlohmann::json::array();
      for (const PipelineConfig& p : config->pipelines) {
        for (const TableConfig& t : p.tables) tables.push_back({p.name, t.name});
      }
      const PgResult r = state->exec(R"SQL(
  with tables as (select t ->> 0 as pipeline, t ->> 1 as table_name from json_array_elements($1::json) t)
  select t.pipeline, t.table_name, w.value, w.value_type, extract(epoch from w.moved_at)::bigint, l.run_id, l.status,
         extract(epoch from l.started_at)::bigint, extract(epoch from l.finished_at)::bigint, l.rows_written,
         l.error, f.horizon_lag_seconds, f.horizon_held_by, f.watermark_ahead, f.null_cursor_rows,
         extract(epoch from now())::bigint,
         extract(epoch from p.partition_hi)::bigint, extract(epoch from p.moved_at)::bigint
  from (select 1) one left join tables t on true
  left join tidemark.watermarks w on w.pipeline = t.pipeline and w.table_name = t.table_name
  left join lateral (select run_id, status, started_at, finished_at, rows_written, error from tidemark.runs r
                     where r.pipeline = t.pipeline and r.table_name = t.table_name
                     order by run_id desc limit 1) l on true
  left join lateral (select horizon_lag_seconds, horizon_held_by, watermark_ahead, null_cursor_rows
                     from tidemark.runs r
                     where r.pipeline = t.pipeline and r.table_name = t.table_name and r.status <> 'running'
                     order by run_id desc limit 1) f on true
  left join lateral (select max(partition_hi) as partition_hi, max(updated_at) as moved_at from tidemark.partitions
                     where pipeline = t.pipeline and table_name = t.table_name and status = 'done') p on true
  )SQL",
                                     {tables.dump()});
      now = r.integer(0, 15);
      for (int i = 0; i < r.rows(); ++i) {
        if (r.is_null(i, 0)) continue;
        TableState s;
        s.value = r.optional_text(i, 2);
        s.value_type = r.optional_text(i, 3);
        s.moved_at = optional_integer(r, i, 4);
        s.run_id = optional_integer(r, i, 5);
        s.run_status = r.optional_text(i, 6);
        s.run_started_at = optional_integer(r, i, 7);
        s.run_finished_at = optional_integer(r, i, 8);
        s.run_rows_written = optional_integer(r, i, 9);
        s.run_error = r.optional_text(i, 10);
        if (!r.is_null(i, 11)) s.horizon_lag = std::stod(r.text(i, 11));
        s.held_by = r.optional_text(i, 12);
        s.ahead = !r.is_null(i, 13) && r.boolean(i, 13);
        s.null_cursor_rows = optional_integer(r, i, 14);
        if (!s.value && !r.is_null(i, 16)) {
          // A partition table: its "watermark" is the end of the last partition done.
          s.value = iso(r.integer(i, 16));
          s.value_type = "timestamptz";
          s.moved_at = optional_integer(r, i, 17);
        }
        states[{r.text(i, 0), r.text(i, 1)}] = s;
      }
    }
  } catch (const std::exception& e) {
    err << "tidemark status: " << e.what() << '\n';
    return kExitFailure;
  }

  nlohmann::json rows = nlohmann::json::array();
  for (const PipelineConfig& p : config->pipelines) {
    for (const TableConfig& t : p.tables) {
      const TableState s = states.count({p.name, t.name}) ? states[{p.name, t.name}] : TableState{};
      const auto wm_seconds = watermark_seconds(s);
      std::optional<std::int64_t> age;
      if (wm_seconds) {
        age = now - *wm_seconds;
      } else if (s.moved_at) {
        age = now - *s.moved_at;  // integer cursors: time since it last moved
      }
      nlohmann::json row;
      row["pipeline"] = p.name;
      row["table"] = t.name;
      row["mode"] = t.mode == TableMode::Incremental ? "incremental" : "partition";
      row["watermark"] = s.value ? nlohmann::json(*s.value) : nlohmann::json();
      row["value_type"] = s.value_type ? nlohmann::json(*s.value_type) : nlohmann::json();
      row["moved_at"] = s.moved_at ? nlohmann::json(iso(*s.moved_at)) : nlohmann::json();
      row["age_seconds"] = age ? nlohmann::json(*age) : nlohmann::json();
      row["stale_after_seconds"] = t.stale_after.count();
      // Ahead of the source (found by the last run, or ahead of this clock
      // by more than hosts' clocks differ) is stale too: it claims rows
      // that do not exist yet.
      const bool ahead = s.ahead || (wm_seconds && age && *age < -static_cast<std::int64_t>(kAheadToleranceSeconds));
      row["ahead"] = ahead;
      row["stale"] = ahead || (age.has_value() && *age > t.stale_after.count());
      nlohmann::json horizon;
      if (s.horizon_lag) horizon["lag_seconds"] = *s.horizon_lag;
      if (s.held_by) horizon["held_by"] = *s.held_by;
      row["horizon"] = horizon;
      row["null_cursor_rows"] = s.null_cursor_rows ? nlohmann::json(*s.null_cursor_rows) : nlohmann::json();
      nlohmann::json run;
      if (s.run_id) {
        run["run_id"] = *s.run_id;
        run["status"] = *s.run_status;
        run["started_at"] = iso(*s.run_started_at);
        run["finished_at"] = s.run_finished_at ? nlohmann::json(iso(*s.run_finished_at)) : nlohmann::json();
        run["rows_written"] = *s.run_rows_written;
        run["error"] = s.run_error ? nlohmann::json(*s.run_error) : nlohmann::json();
      }
      row["last_run"] = run;
      rows.push_back(row);
    }
  }
  if (command_line.json) {
    out << rows.dump(2) << '\n';
    return kExitOk;
  }
  fmt::print(out, "{:<20} {:<20} {:<28} {:>7} {:>7} {:<20} {:<18} {:>8} {}\n", "PIPELINE", "TABLE", "WATERMARK",
             "AGE", "HELD", "MOVED", "LAST RUN", "ROWS", "STALE");
  std::vector<std::string> notes;
  for (const auto& row : rows) {
    const auto& run = row["last_run"];
    const std::string last_run =
        run.is_null() ? "never" : "#" + std::to_string(run["run_id"].get<std::int64_t>()) + " " +
                                      run["status"].get<std::string>();
    const auto& horizon = row["horizon"];
    const std::string name = row["pipeline"].get<std::string>() + "." + row["table"].get<std::string>();
    fmt::print(out, "{:<20} {:<20} {:<28} {:>7} {:>7} {:<20} {:<18} {:>8} {}\n", row["pipeline"].get<std::string>(),
               row["table"].get<std::string>(),
               row["watermark"].is_null() ? "(none)" : row["watermark"].get<std::string>(),
               row["age_seconds"].is_null() ? "-" : human_age(row["age_seconds"].get<std::int64_t>()),
               horizon.contains("lag_seconds")
                   ? human_age(static_cast<std::int64_t>(std::llround(horizon["lag_seconds"].get<double>())))
                   : "-",
               row["moved_at"].is_null() ? "-" : row["moved_at"].get<std::string>(), last_run,
               run.is_null() ? "-" : std::to_string(run["rows_written"].get<std::int64_t>()),
               row["ahead"].get<bool>() ? "AHEAD" : row["stale"].get<bool>() ? "STALE" : "ok");
    if (horizon.contains("held_by")) {
      notes.push_back(name + ": " + (row["ahead"].get<bool>() ? "" : "held back by ") +
                      horizon["held_by"].get<std::string>());
    }
    if (!row["null_cursor_rows"].is_null() && row["null_cursor_rows"].get<std::int64_t>() > 0) {
      notes.push_back(name + ": " + std::to_string(row["null_cursor_rows"].get<std::int64_t>()) +
                      " source rows have a NULL cursor and are never loaded");
    }
  }
  if (!notes.empty()) out << '\n';
  for (const std::string& note : notes) out << note << '\n';
  return kExitOk;
}

}  // namespace tidemark
