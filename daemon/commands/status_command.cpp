#include <fmt/format.h>
#include <fmt/ostream.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>

#include "core/fleet/table_owner.h"
#include "core/schedule/pause_set.h"
#include "core/text/glob.h"
#include "core/text/plain_text.h"
#include "core/time/duration.h"
#include "core/time/instant_text.h"
#include "core/watermark/table_reason.h"
#include "core/watermark/watermark_health.h"
#include "daemon/commands/command_support.h"
#include "daemon/commands/commands.h"
#include "daemon/commands/exit_code.h"
#include "daemon/logging.h"
#include "daemon/pg/state/member_registry.h"
#include "daemon/pg/state/progress_book.h"
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

// What the filters and the summary look at, decided once per table.
struct TableFlags {
  bool stale = false;    // stale or ahead: what the stale alert looks at
  bool failing = false;  // the latest run, or the latest reconcile, failed
  bool paused = false;
  bool running = false;
  bool waiting = false;  // held back by an input, or stale because a transaction held it back
};

TableFlags flags_of(const TableState& s, const TableConfig& t, const WatermarkHealth& health, const TableReason& why,
                    bool paused) {
  TableFlags f;
  f.stale = health.stale() || health.ahead();
  f.failing = s.last_finished_failed || s.reconcile_failing(t);
  f.paused = paused;
  f.running = s.last_run && s.last_run->status == "running";
  // Not any run whose horizon named what bounded it (a role without
  // pg_monitor names the clock on every run): one that an input holds
  // back, or that is stale because a transaction held it.
  f.waiting = why.reason == Reason::Waiting || why.reason == Reason::HeldBack ||
              (s.input_wait_seconds && *s.input_wait_seconds > 0);
  return f;
}

// Whether the table is one the command line asked for: every flag asked
// must hold (as kubectl's selectors do).
bool wanted(const StatusOptions& asked, const TableFlags& f) {
  return (!asked.stale || f.stale) && (!asked.failing || f.failing) && (!asked.paused || f.paused) &&
         (!asked.waiting || f.waiting);
}

nlohmann::json pause_json(const Pause* pause) {
  if (pause == nullptr) return nlohmann::json();
  return {{"scope", pause->whole_pipeline() ? "pipeline" : "table"},
          {"reason", pause->reason},
          {"by", pause->paused_by},
          {"since", format_unix_seconds(pause->paused_at)}};
}

// One table's row of `status --json`.
nlohmann::json status_row(const PipelineConfig& p, const TableConfig& t, const TableState& s,
                          const WatermarkHealth& health, const TableReason& why, const Pause* pause,
                          const CopyProgress* progress, const RangesDone* ranges,
                          const std::vector<FleetMember>& members) {
  nlohmann::json row;
  row["pipeline"] = p.name;
  row["table"] = t.name;
  row["mode"] = table_mode_name(t.mode);
  row["watermark"] = s.watermark ? nlohmann::json(*s.watermark) : nlohmann::json();
  row["value_type"] = s.value_type ? nlohmann::json(*s.value_type) : nlohmann::json();
  row["moved_at"] = s.moved_at ? nlohmann::json(format_unix_seconds(*s.moved_at)) : nlohmann::json();
  row["age_seconds"] = health.age_seconds
                           ? nlohmann::json(static_cast<std::int64_t>(std::llround(*health.age_seconds)))
                           : nlohmann::json();
  row["stale_after_seconds"] = t.stale_after.count();
  row["ahead"] = health.ahead();
  row["stale"] = health.stale();
  row["paused"] = pause_json(pause);
  nlohmann::json horizon;
  if (s.horizon_lag_seconds) horizon["lag_seconds"] = *s.horizon_lag_seconds;
  if (s.horizon_held_by) horizon["held_by"] = *s.horizon_held_by;
  row["horizon"] = horizon;
  row["null_cursor_rows"] = s.null_cursor_rows ? nlohmann::json(*s.null_cursor_rows) : nlohmann::json();
  row["infinite_cursor_rows"] = s.infinite_cursor_rows ? nlohmann::json(*s.infinite_cursor_rows) : nlohmann::json();
  row["unseen_changes"] = s.unseen_changes ? nlohmann::json(*s.unseen_changes) : nlohmann::json();
  nlohmann::json run;
  if (s.last_run) {
    run["run_id"] = s.last_run->run_id;
    run["status"] = s.last_run->status;
    run["started_at"] = format_unix_seconds(s.last_run->started_at);
    run["finished_at"] =
        s.last_run->finished_at ? nlohmann::json(format_unix_seconds(*s.last_run->finished_at)) : nlohmann::json();
    run["rows_written"] = s.last_run->rows_written;
    run["error"] = s.last_run->error ? nlohmann::json(*s.last_run->error) : nlohmann::json();
    // A run in flight: how far its copy has got, as last recorded.
    if (progress != nullptr) {
      run["rows_so_far"] = progress->rows;
      run["bytes_so_far"] = progress->bytes;
      run["progress_at"] = format_unix_seconds(progress->updated_at);
    }
  }
  row["last_run"] = run;
  // A ranged first load under way, or stopped part way: where it resumes.
  row["first_load_ranges"] =
      ranges != nullptr ? nlohmann::json{{"done", ranges->done}, {"of", ranges->all}} : nlohmann::json();
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
  return row;
}

// The table for people: a line a table, then the notes.
void print_rows(const nlohmann::json& rows, std::ostream& out) {
  fmt::print(out, "{:<20} {:<20} {:<28} {:>7} {:>7} {:<20} {:<18} {:>8} {:<6} {:<24} {}\n", "PIPELINE", "TABLE",
             "WATERMARK", "AGE", "HELD", "MOVED", "LAST RUN", "ROWS", "STATE", "OWNER", "WHY");
  std::vector<std::string> notes;
  for (const auto& row : rows) {
    const auto& run = row["last_run"];
    const std::string last_run =
        run.is_null() ? "never" : "#" + std::to_string(run["run_id"].get<std::int64_t>()) + " " +
                                      run["status"].get<std::string>();
    const auto& horizon = row["horizon"];
    const auto& pause = row["paused"];
    const std::string name = row["pipeline"].get<std::string>() + "." + row["table"].get<std::string>();
    // The error in WHY comes from the database: escaped like history's.
    const std::string why = row["why"].is_null() ? "" : escape_control_characters(row["why"]["text"].get<std::string>());
    const std::string state = !pause.is_null()           ? "PAUSED"
                              : row["ahead"].get<bool>() ? "AHEAD"
                              : row["stale"].get<bool>() ? "STALE"
                                                         : "ok";
    const bool copying = !run.is_null() && run.contains("rows_so_far");
    const std::string rows_text = run.is_null() ? "-"
                             : copying     ? std::to_string(run["rows_so_far"].get<std::int64_t>())
                                           : std::to_string(run["rows_written"].get<std::int64_t>());
    fmt::print(out, "{:<20} {:<20} {:<28} {:>7} {:>7} {:<20} {:<18} {:>8} {:<6} {:<24} {}\n",
               row["pipeline"].get<std::string>(), row["table"].get<std::string>(),
               row["watermark"].is_null() ? "(none)" : row["watermark"].get<std::string>(),
               row["age_seconds"].is_null() ? "-" : format_age(row["age_seconds"].get<std::int64_t>()),
               horizon.contains("lag_seconds")
                   ? format_age(static_cast<std::int64_t>(std::llround(horizon["lag_seconds"].get<double>())))
                   : "-",
               row["moved_at"].is_null() ? "-" : row["moved_at"].get<std::string>(), last_run, rows_text, state,
               row["owner"].is_null() ? "-" : row["owner"].get<std::string>(), why);
    if (copying) {
      notes.push_back(name + ": run #" + std::to_string(run["run_id"].get<std::int64_t>()) + " running since " +
                      run["started_at"].get<std::string>() + ", " +
                      grouped(run["rows_so_far"].get<std::int64_t>()) + " rows copied by " +
                      run["progress_at"].get<std::string>());
    }
    if (const auto& ranges = row["first_load_ranges"]; !ranges.is_null()) {
      const bool running = !run.is_null() && run["status"] == "running";
      notes.push_back(name + ": first load in ranges, " + std::to_string(ranges["done"].get<std::int64_t>()) +
                      " of " + std::to_string(ranges["of"].get<std::int64_t>()) + " committed" +
                      (running ? "" : "; the next run loads the rest, then diffs the whole table"));
    }
    if (!pause.is_null()) {
      notes.push_back(name + ": paused" + (pause["scope"] == "pipeline" ? " with its pipeline" : "") + " since " +
                      pause["since"].get<std::string>() + " by " + pause["by"].get<std::string>() + ": " +
                      escape_control_characters(pause["reason"].get<std::string>()));
    }
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
}

}  // namespace

int run_status(const ConfigPtr& config, const StatusOptions& command_line, std::ostream& out, std::ostream& err) {
  if (!command_line.pipeline.empty() && config->find_pipeline(command_line.pipeline) == nullptr) {
    err << "tidemark status: no pipeline named \"" << command_line.pipeline << "\"\n";
    return kExitUsage;
  }
  // Only the tables the names select are read: a glob over one pipeline
  // of 10,000 tables asks the state database for those alone.
  std::vector<std::pair<const PipelineConfig*, const TableConfig*>> selected;
  std::vector<TableKey> asked;
  for (const PipelineConfig& p : config->pipelines) {
    if (!command_line.pipeline.empty() && p.name != command_line.pipeline) continue;
    for (const TableConfig& t : p.tables) {
      if (!command_line.table.empty() && !glob_matches(command_line.table, t.name)) continue;
      selected.emplace_back(&p, &t);
      asked.push_back({p.name, t.name});
    }
  }
  std::vector<TableState> states(asked.size());
  double now = 0;
  PauseSet pauses;
  std::map<TableKey, CopyProgress> progress;  // of the runs in flight
  std::map<TableKey, RangesDone> load_ranges;  // of the ranged first loads under way
  std::vector<FleetMember> members;  // the live ones, who own the tables
  try {
    const auto state = connect_to(*config, config->daemon.state);
    if (state_schema_exists_or_say(*state, *config, err)) {
      auto snapshot = StateReader(*state).table_states(asked);
      if (!snapshot) throw std::runtime_error(snapshot.error());
      now = snapshot->now;
      states = std::move(snapshot->tables);
      // A role that may read the runs but not the pauses (granted before
      // they existed) still gets its status, without them.
      try {
        pauses = read_pauses(*state);
      } catch (const std::exception& e) {
        err << "tidemark status: cannot read the pauses, PAUSED is not shown: " << e.what() << '\n';
      }
      std::vector<TableKey> running;
      for (const TableState& s : states) {
        if (s.last_run && s.last_run->status == "running") running.push_back(s.table);
      }
      // Recorded from outside the runs' transactions every few seconds; a
      // role that cannot read them sees the runs without their progress.
      ProgressBook book(*state);
      if (auto read = book.read(running)) progress = std::move(read).value();
      if (auto read = book.ranges(asked)) load_ranges = std::move(read).value();
      // A state schema older than the fleet has no members: no owners.
      if (auto live = MemberRegistry(*state).live_members()) members = std::move(live).value().members;
    }
  } catch (const std::exception& e) {
    err << "tidemark status: " << e.what() << '\n';
    return kExitFailure;
  }

  nlohmann::json rows = nlohmann::json::array();
  std::size_t stale = 0, failing = 0, paused = 0, running = 0, waiting = 0;
  for (std::size_t i = 0; i < selected.size(); ++i) {
    const auto [p, t] = selected[i];
    const TableState& s = states[i];
    const WatermarkHealth health = assess_watermark(s.reading(), now, t->stale_after);
    TableRunFacts facts = s.run_facts();
    facts.reconcile_failed = s.reconcile_failing(*t);
    const TableReason why = explain_table(s.reading(), facts, now, t->stale_after);
    const Pause* pause = pauses.pause_of({p->name, t->name});
    const TableFlags f = flags_of(s, *t, health, why, pause != nullptr);
    stale += f.stale;
    failing += f.failing;
    paused += f.paused;
    running += f.running;
    waiting += f.waiting;
    // Progress recorded before this run began is the run before's.
    const auto copied = progress.find({p->name, t->name});
    const CopyProgress* copying = copied != progress.end() && f.running &&
                                          copied->second.updated_at >= s.last_run->started_at
                                      ? &copied->second
                                      : nullptr;
    // A table with a watermark has none under way, whatever is left.
    const auto ranged = s.watermark ? load_ranges.end() : load_ranges.find({p->name, t->name});
    if (wanted(command_line, f)) {
      rows.push_back(status_row(*p, *t, s, health, why, pause, copying,
                                ranged != load_ranges.end() ? &ranged->second : nullptr, members));
    }
  }
  if (command_line.json) {
    out << rows.dump(2) << '\n';
    return kExitOk;
  }
  print_rows(rows, out);
  const bool filtered = command_line.stale || command_line.failing || command_line.paused || command_line.waiting;
  fmt::print(out, "\n{} tables: {} stale, {} failing, {} paused, {} running, {} waiting{}\n", selected.size(), stale,
             failing, paused, running, waiting, filtered ? fmt::format("; {} shown", rows.size()) : "");
  return kExitOk;
}

}  // namespace tidemark
