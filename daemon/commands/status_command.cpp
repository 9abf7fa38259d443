#include <fmt/format.h>
#include <fmt/ostream.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>

#include "core/fleet/table_owner.h"
#include "core/time/duration.h"
#include "core/time/instant_text.h"
#include "core/watermark/table_reason.h"
#include "core/watermark/watermark_health.h"
#include "daemon/commands/command_support.h"
#include "daemon/commands/commands.h"
#include "daemon/commands/exit_code.h"
#include "daemon/logging.h"
#include "daemon/pg/state/member_registry.h"
#include "daemon/pg/state/state_reader.h"

namespace tidemark {
namespace {

// The reason a table is stale or failing, for --json: null when healthy.
nlohmann::json why_json(const TableReason& why) {
  if (why.reason == Reason::None) return nlohmann::json();
  nlohmann::json out;
  out["reason"] = reason_name(why.reason);
  out["text"] = why.text;
  if (why.reason == Reason::SchemaDrift) {
    out["changes"] = why.changes;
    out["failures"] = why.failures;
    out["since"] = why.failing_since ? nlohmann::json(format_unix_seconds(*why.failing_since)) : nlohmann::json();
  }
  if (why.reason == Reason::Failing) {
    out["failures"] = why.failures;
    out["since"] = why.failing_since ? nlohmann::json(format_unix_seconds(*why.failing_since)) : nlohmann::json();
    out["error_kind"] = why.error_kind ? nlohmann::json(error_kind_name(*why.error_kind)) : nlohmann::json();
    out["error"] = why.error_line;
  }
  if (why.reason == Reason::ReconcileFailing) out["error"] = why.error_line;
  if (why.reason == Reason::UnseenChanges) out["unseen_changes"] = why.unseen_changes;
  if (why.reason == Reason::HeldBack || why.reason == Reason::Waiting ||
      (why.reason == Reason::Ahead && !why.held_by.empty())) {
    out["held_by"] = why.held_by;
  }
  if (why.reason == Reason::Waiting) out["waited_seconds"] = why.waited_seconds;
  return out;
}

}  // namespace

int run_status(const ConfigPtr& config, const StatusOptions& command_line, std::ostream& out, std::ostream& err) {
  std::map<std::pair<std::string, std::string>, TableState> states;
  double now = 0;
  std::vector<FleetMember> members;  // the live ones, who own the tables
  try {
    const auto state = connect_to(*config, config->daemon.state);
    if (state_schema_exists_or_say(*state, *config, err)) {
      auto snapshot = StateReader(*state).table_states(configured_tables(*config));
      if (!snapshot) throw std::runtime_error(snapshot.error());
      now = snapshot->now;
      for (const TableState& s : snapshot->tables) states[{s.table.pipeline, s.table.table}] = s;
      // A state schema older than the fleet has no members: no owners.
      if (auto live = MemberRegistry(*state).live_members()) members = std::move(live).value().members;
    }
  } catch (const std::exception& e) {
    err << "tidemark status: " << e.what() << '\n';
    return kExitFailure;
  }

  nlohmann::json rows = nlohmann::json::array();
  for (const PipelineConfig& p : config->pipelines) {
    for (const TableConfig& t : p.tables) {
      const TableState s = states.count({p.name, t.name}) ? states[{p.name, t.name}] : TableState{};
      const WatermarkHealth health = assess_watermark(s.reading(), now, t.stale_after);
      TableRunFacts facts = s.run_facts();
      facts.reconcile_failed = s.reconcile_failing(t);
      const TableReason why = explain_table(s.reading(), facts, now, t.stale_after);
      nlohmann::json row;
      row["pipeline"] = p.name;
      row["table"] = t.name;
      row["mode"] = table_mode_name(t.mode);
      row["watermark"] = s.watermark ? nlohmann::json(*s.watermark) : nlohmann::json();
      row["value_type"] = s.value_type ? nlohmann::json(*s.value_type) : nlohmann::json();
      row["moved_at"] = s.moved_at ? nlohmann::json(format_unix_seconds(*s.moved_at)) : nlohmann::json();
      row["age_seconds"] =
          health.age_seconds ? nlohmann::json(static_cast<std::int64_t>(std::llround(*health.age_seconds)))
                             : nlohmann::json();
      row["stale_after_seconds"] = t.stale_after.count();
      row["ahead"] = health.ahead();
      row["stale"] = health.stale();
      nlohmann::json horizon;
      if (s.horizon_lag_seconds) horizon["lag_seconds"] = *s.horizon_lag_seconds;
      if (s.horizon_held_by) horizon["held_by"] = *s.horizon_held_by;
      row["horizon"] = horizon;
      row["null_cursor_rows"] = s.null_cursor_rows ? nlohmann::json(*s.null_cursor_rows) : nlohmann::json();
      row["infinite_cursor_rows"] =
          s.infinite_cursor_rows ? nlohmann::json(*s.infinite_cursor_rows) : nlohmann::json();
      row["unseen_changes"] = s.unseen_changes ? nlohmann::json(*s.unseen_changes) : nlohmann::json();
      nlohmann::json run;
      if (s.last_run) {
        run["run_id"] = s.last_run->run_id;
        run["status"] = s.last_run->status;
        run["started_at"] = format_unix_seconds(s.last_run->started_at);
        run["finished_at"] = s.last_run->finished_at ? nlohmann::json(format_unix_seconds(*s.last_run->finished_at)) : nlohmann::json();
        run["rows_written"] = s.last_run->rows_written;
        run["error"] = s.last_run->error ? nlohmann::json(*s.last_run->error) : nlohmann::json();
      }
      row["last_run"] = run;
      nlohmann::json reconcile;
      if (s.last_reconcile) {
        reconcile["finished_at"] = format_unix_seconds(s.last_reconcile->finished_at);
        reconcile["rows_deleted"] = s.last_reconcile->deleted;
        reconcile["rows_missing"] = s.last_reconcile->missing;
        reconcile["rows_changed"] = s.last_reconcile->changed;
      }
      row["last_reconcile"] = reconcile;
      row["why"] = why_json(why);
      const FleetMember* owner = owning_member({p.name, t.name}, members);
      row["owner"] = owner ? nlohmann::json(owner->host + " pid " + std::to_string(owner->pid)) : nlohmann::json();
      rows.push_back(row);
    }
  }
  if (command_line.json) {
    out << rows.dump(2) << '\n';
    return kExitOk;
  }
  fmt::print(out, "{:<20} {:<20} {:<28} {:>7} {:>7} {:<20} {:<18} {:>8} {:<5} {:<24} {}\n", "PIPELINE", "TABLE",
             "WATERMARK", "AGE", "HELD", "MOVED", "LAST RUN", "ROWS", "STALE", "OWNER", "WHY");
  std::vector<std::string> notes;
  for (const auto& row : rows) {
    const auto& run = row["last_run"];
    const std::string last_run =
        run.is_null() ? "never" : "#" + std::to_string(run["run_id"].get<std::int64_t>()) + " " +
                                      run["status"].get<std::string>();
    const auto& horizon = row["horizon"];
    const std::string name = row["pipeline"].get<std::string>() + "." + row["table"].get<std::string>();
    // The error in WHY comes from the database: escaped like history's.
    const std::string why = row["why"].is_null() ? "" : escape_control_characters(row["why"]["text"].get<std::string>());
    fmt::print(out, "{:<20} {:<20} {:<28} {:>7} {:>7} {:<20} {:<18} {:>8} {:<5} {:<24} {}\n",
               row["pipeline"].get<std::string>(),
               row["table"].get<std::string>(),
               row["watermark"].is_null() ? "(none)" : row["watermark"].get<std::string>(),
               row["age_seconds"].is_null() ? "-" : format_age(row["age_seconds"].get<std::int64_t>()),
               horizon.contains("lag_seconds")
                   ? format_age(static_cast<std::int64_t>(std::llround(horizon["lag_seconds"].get<double>())))
                   : "-",
               row["moved_at"].is_null() ? "-" : row["moved_at"].get<std::string>(), last_run,
               run.is_null() ? "-" : std::to_string(run["rows_written"].get<std::int64_t>()),
               row["ahead"].get<bool>() ? "AHEAD" : row["stale"].get<bool>() ? "STALE" : "ok",
               row["owner"].is_null() ? "-" : row["owner"].get<std::string>(), why);
    if (horizon.contains("held_by")) {
      const std::string held_by = horizon["held_by"].get<std::string>();
      notes.push_back(name + ": " + (row["ahead"].get<bool>() ? held_by : held_back_text(held_by)));
    }
    if (!row["null_cursor_rows"].is_null() && row["null_cursor_rows"].get<std::int64_t>() > 0) {
      notes.push_back(name + ": " + std::to_string(row["null_cursor_rows"].get<std::int64_t>()) +
                      " source rows have a NULL cursor and are never loaded");
    }
    if (!row["infinite_cursor_rows"].is_null() && row["infinite_cursor_rows"].get<std::int64_t>() > 0) {
      notes.push_back(name + ": " + std::to_string(row["infinite_cursor_rows"].get<std::int64_t>()) +
                      " source rows have an infinite cursor (infinity or -infinity) and are never loaded");
    }
  }
  if (!notes.empty()) out << '\n';
  for (const std::string& note : notes) out << note << '\n';
  return kExitOk;
}

}  // namespace tidemark
