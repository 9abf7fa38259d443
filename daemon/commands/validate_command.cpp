#include "daemon/commands/validate_command.h"

#include <date/tz.h>
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "core/config/config_error.h"
#include "core/config/config_model.h"
#include "core/config/dsn_mask.h"
#include "core/config/table_modes.h"
#include "core/text/plain_text.h"
#include "core/time/duration.h"
#include "core/time/instant_text.h"
#include "daemon/commands/command_support.h"
#include "daemon/commands/exit_code.h"
#include "daemon/commands/target_checks.h"
#include "daemon/config_loader.h"
#include "daemon/pg/data/pg_source.h"
#include "daemon/pg/libpq/json_parameter.h"
#include "daemon/serve/endpoint_security.h"

namespace tidemark {
namespace {

std::string describe_connection(const ConnectionConfig& c) {
  switch (c.source) {
    case DsnSource::Inline: return "dsn \"" + mask_dsn_password(c.value) + "\"";
    case DsnSource::Environment: return "dsn from $" + c.value;
    case DsnSource::File: return "dsn from file " + c.value;
  }
  return {};
}

std::string describe_span(const CursorSpan& span) {
  return span.kind == CursorSpan::Kind::Duration ? format_duration(std::chrono::seconds(span.amount))
                                                 : std::to_string(span.amount);
}

void print_table(std::ostream& out, const PipelineConfig& p, const TableConfig& t, Instant now) {
  // What the table's mode takes, in the order a reader follows a row:
  // from where, to where, on which key, past which cursor.
  fmt::print(out, "  table {}: {}", t.name, table_mode_name(t.mode));
  if (t.partition) {
    static const char* const kUnits[] = {"hour", "day", "month"};
    fmt::print(out, " by {} of {}", kUnits[static_cast<int>(t.partition->unit)], t.partition->column);
  }
  if (t.source_table) fmt::print(out, " {}", t.source_table->display());
  fmt::print(out, " -> {}", t.target_table.display());
  if (!t.key.empty()) fmt::print(out, ", key [{}]", join(t.key));
  if (!t.cursor.empty()) fmt::print(out, ", cursor {}, lookback {}", t.cursor, describe_span(t.lookback));
  if (t.max_window) fmt::print(out, ", max_window {}", describe_span(*t.max_window));
  if (t.on_schema_change == SchemaChangePolicy::AppendNewColumns) fmt::print(out, ", on_schema_change append_new_columns");
  if (t.initial) fmt::print(out, ", initial {}", *t.initial);
  if (t.partition && !t.lookback.is_zero()) fmt::print(out, ", lookback {}", describe_span(t.lookback));
  if (!t.inputs.empty()) {
    std::vector<std::string> names;
    for (const TableRef& input : t.inputs) names.push_back(input.display());
    fmt::print(out, ", inputs [{}]", join(names));
  }
  fmt::print(out, ", schedule \"{}\"\n    next:", t.schedule->expression());
  Instant from = now;
  for (int i = 0; i < 3; ++i) {
    const auto next = t.schedule->next_after(from, *p.zone);
    if (!next) break;
    fmt::print(out, " {}", format_instant(*next));
    from = *next;
  }
  fmt::print(out, "\n");
  if (t.deletes && t.deletes->reconcile) {
    fmt::print(out, "    deletes: {}{}, reconcile \"{}\", next:",
               t.partition                                 ? "partitions that differ rewritten"
               : t.deletes->action == DeleteAction::Mark ? "mark "
                                                           : "delete",
               t.deletes->action == DeleteAction::Mark ? t.deletes->mark_column : std::string(),
               t.deletes->reconcile->expression());
    if (const auto next = t.deletes->reconcile->next_after(now, *p.zone)) fmt::print(out, " {}", format_instant(*next));
    fmt::print(out, "\n");
  }
}

// What validate learns by connecting to a source (or to a standby's
// primary): whether a run's safe horizon can see every writer there.
struct SourceProbe {
  std::string unreachable;  // why it could not be asked; empty when it answered
  bool in_recovery = false;
  bool sees_all_sessions = true;
  std::string database;
  std::string system_identifier;
  // Per (source table, cursor) asked about: what makes a run refuse
  // lookback 0 whatever the role sees.
  struct Table {
    std::string subscription;  // the logical replication subscription writing it; empty when none
    std::int64_t sequence_cache = 1;
  };
  std::map<std::pair<std::string, std::string>, Table> tables;
};

// `tables` are the (quoted source table, cursor) pairs to ask about.
SourceProbe probe_source(const Config& config, const std::string& name,
                         const std::vector<std::pair<std::string, std::string>>& tables = {}) {
  SourceProbe probe;
  try {
    const auto connection = connect_to_source(config, name);
    const PgResult r = connection->exec(
        "select pg_is_in_recovery(), (select r.rolsuper or pg_has_role(current_user, 'pg_read_all_stats', 'usage')"
        " from pg_roles r where r.rolname = current_user), current_database(),"
        " (select system_identifier::text from pg_control_system())");
    probe.in_recovery = r.boolean(0, 0);
    probe.sees_all_sessions = r.boolean(0, 1);
    probe.database = r.text(0, 2);
    probe.system_identifier = r.text(0, 3);
    if (!tables.empty()) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& [table, cursor] : tables) list.push_back({table, cursor});
      const PgResult t = connection->exec("select t ->> 0, t ->> 1, " + subscription_sql("to_regclass(t ->> 0)") + ", " +
                                              sequence_cache_sql("to_regclass(t ->> 0)", "(t ->> 1)") +
                                              " from json_array_elements($1::json) t",
                                          {json_parameter(list)});
      for (int i = 0; i < t.rows(); ++i) {
        SourceProbe::Table& found = probe.tables[{t.text(i, 0), t.text(i, 1)}];
        found.subscription = t.text(i, 2);
        if (!t.is_null(i, 3)) found.sequence_cache = t.integer(i, 3);
      }
    }
  } catch (const std::exception& e) {
    probe.unreachable = e.what();
  }
  return probe;
}

// The incremental tables of `source` that have no lookback: the ones a
// horizon that cannot see every writer refuses.
std::vector<std::pair<std::string, std::string>> tables_without_lookback(const Config& config,
                                                                         const std::string& source) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const PipelineConfig& p : config.pipelines) {
    if (p.source != source) continue;
    for (const TableConfig& t : p.tables) {
      if (table_mode(t.mode).reads_past_cursor && t.lookback.is_zero() && t.source_table) {
        out.emplace_back(t.source_table->quoted(), t.cursor);
      }
    }
  }
  return out;
}

// Where a source's runs read the horizon: the source itself, or for a hot
// standby its primary: connection, which must be the standby's own
// database on a server that takes the writes.
struct HorizonSource {
  std::string name;         // the connection the horizon is read on
  const SourceProbe* probe;  // its answer
  std::string broken;       // why every run of the source fails; empty when none
};

HorizonSource horizon_source(const std::string& name, const ConnectionConfig* c,
                             std::map<std::string, SourceProbe>& probes, const Config& config) {
  const SourceProbe& own = probes[name];
  if (!own.in_recovery || c == nullptr || c->primary.empty()) return {name, &own, ""};
  if (!probes.count(c->primary)) probes[c->primary] = probe_source(config, c->primary);
  const SourceProbe& primary = probes[c->primary];
  HorizonSource out{c->primary, &primary, ""};
  if (!primary.unreachable.empty()) return out;
  if (primary.in_recovery) {
    out.broken = "its primary: " + c->primary + " is itself in recovery; point it at the database that takes the writes";
  } else if (primary.database != own.database || primary.system_identifier != own.system_identifier) {
    out.broken = "its primary: " + c->primary + " is database " + primary.database +
                 " of the server with system identifier " + primary.system_identifier +
                 ", but the standby serves database " + own.database + " of system identifier " +
                 own.system_identifier + ", so its open transactions are not this source's writers; point it at "
                 "database " + own.database + " on the standby's primary";
  }
  return out;
}

// Checks what only the sources can tell: a table without a lookback needs
// a horizon that sees every writer, and a standby's primary: must be its
// own. Prints each source's answer; returns how many errors it found.
int check_sources(const Config& config, std::ostream& out, std::ostream& err) {
  std::map<std::string, SourceProbe> probes;
  std::vector<std::string> sources;
  for (const PipelineConfig& p : config.pipelines) {
    if (!probes.count(p.source)) {
      probes[p.source] = probe_source(config, p.source, tables_without_lookback(config, p.source));
      sources.push_back(p.source);
    }
  }
  std::map<std::string, HorizonSource> horizons;
  for (const std::string& name : sources) {
    horizons.emplace(name, horizon_source(name, config.daemon.find_connection(name), probes, config));
  }
  int errors = 0;
  std::sort(sources.begin(), sources.end());
  for (const std::string& name : sources) {
    const SourceProbe& probe = probes[name];
    const HorizonSource& horizon = horizons.at(name);
    if (!probe.unreachable.empty()) {
      fmt::print(out, "source {}: not checked ({})\n", name, probe.unreachable);
      continue;
    }
    const std::string sees = !horizon.probe->unreachable.empty()
                                 ? "not checked (" + horizon.probe->unreachable + ")"
                             : horizon.probe->sees_all_sessions
                                 ? std::string("sees every session's transactions")
                                 : std::string("cannot see other sessions' transactions (no pg_monitor)");
    if (!probe.in_recovery) {
      fmt::print(out, "source {}: primary, {}\n", name, sees);
    } else if (horizon.name != name) {
      fmt::print(out, "source {}: hot standby; horizon read on {}, {}\n", name, horizon.name, sees);
    } else {
      fmt::print(out, "source {}: hot standby without a primary: connection, {}\n", name, sees);
    }
    if (!horizon.broken.empty()) {
      fmt::print(err, "{}: source {}: {}; every run of its tables fails\n", config.daemon.file, name, horizon.broken);
      ++errors;
    }
  }
  for (const PipelineConfig& p : config.pipelines) {
    const SourceProbe& probe = probes[p.source];
    const HorizonSource& horizon = horizons.at(p.source);
    if (!probe.unreachable.empty() || !horizon.probe->unreachable.empty() || !horizon.broken.empty()) continue;
    for (const TableConfig& t : p.tables) {
      if (!table_mode(t.mode).reads_past_cursor || !t.lookback.is_zero()) continue;
      std::string why;
      if (!horizon.probe->sees_all_sessions) {
        why = "the role of " + (horizon.name == p.source ? "source " + p.source : "the primary: " + horizon.name +
                                                                                     " of source " + p.source) +
              " cannot see other sessions' transactions, so rows still in flight cannot be held back; grant it "
              "pg_monitor, or set a lookback longer than the longest write transaction";
      } else if (probe.in_recovery && horizon.name == p.source) {
        why = "source " + p.source +
              " is a hot standby, which cannot see the primary's open transactions; give the connection a "
              "primary: (a connection to its primary), or set a lookback longer than the longest write "
              "transaction plus the replication lag";
      } else if (const auto found = probe.tables.find({t.source_table->quoted(), t.cursor});
                 found != probe.tables.end()) {
        if (!found->second.subscription.empty()) {
          why = "the table is written by logical replication (subscription " + found->second.subscription +
                "), whose rows are stamped on the publisher, where transactions still open cannot be seen; set a "
                "lookback longer than the publisher's longest write transaction plus the replication lag";
        } else if (found->second.sequence_cache > 1) {
          const std::string cache = std::to_string(found->second.sequence_cache);
          why = "cursor " + t.cursor + " takes its ids from a sequence with CACHE " + cache +
                ", so a session's cached ids commit below ids committed long before; set the sequence's CACHE "
                "to 1, or a lookback (in ids) larger than " + cache + " times the number of sessions that insert";
        }
      }
      if (why.empty()) continue;
      if (!takes_key(t.mode, "lookback")) {
        why += " (" + a_mode_table(t.mode) + " takes no lookback, which would load rows twice: only the first way "
               "out applies)";
      }
      fmt::print(err, "{}: pipeline {}, table {}: lookback 0s is refused: {}\n", p.location.file, p.name, t.name, why);
      ++errors;
    }
  }
  return errors;
}

// The cursor columns whose types `inputs:` depends on: each incremental
// input's (its watermark bounds its dependents by time; a timestamp or
// date one is read in its pipeline's time zone, which must be its
// source's) and each incremental dependent's own (its hi is a time the
// inputs lower). Asked of each source once; a source that cannot be
// reached is not checked. Each error is said where the input is named.
int check_inputs(const Config& config, std::ostream& err) {
  struct Asked {
    std::string source;
    std::string table;  // quoted
    std::string cursor;
    const PipelineConfig* pipeline = nullptr;
  };
  struct Found {
    CursorType type = CursorType::TimestampTz;
    std::string source_zone;  // the source session's TimeZone
  };
  std::map<std::string, std::vector<Asked>> by_source;
  const auto cursor_of = [&](const std::string& pipeline, const std::string& table) -> std::optional<Asked> {
    const PipelineConfig* p = config.find_pipeline(pipeline);
    const TableConfig* t = p == nullptr ? nullptr : p->find_table(table);
    if (t == nullptr || !table_mode(t->mode).reads_past_cursor || !t->source_table) return std::nullopt;
    return Asked{p->source, t->source_table->quoted(), t->cursor, p};
  };
  for (const PipelineConfig& p : config.pipelines) {
    for (const TableConfig& t : p.tables) {
      if (t.inputs.empty()) continue;
      if (const auto own = cursor_of(p.name, t.name)) by_source[own->source].push_back(*own);
      for (const TableRef& input : t.inputs) {
        if (const auto theirs = cursor_of(input.pipeline, input.table)) by_source[theirs->source].push_back(*theirs);
      }
    }
  }
  std::map<std::pair<std::string, std::string>, Found> found;  // (quoted table, cursor)
  for (const auto& [source, asked] : by_source) {
    try {
      const auto connection = connect_to_source(config, source);
      nlohmann::json list = nlohmann::json::array();
      for (const Asked& a : asked) list.push_back({a.table, a.cursor});
      const PgResult r = connection->exec(
          "select t ->> 0, t ->> 1, (select format_type(a.atttypid, a.atttypmod) from pg_attribute a"
          " where a.attrelid = to_regclass(t ->> 0) and a.attname = t ->> 1 and not a.attisdropped),"
          " current_setting('TimeZone') from json_array_elements($1::json) t",
          {json_parameter(list)});
      for (int i = 0; i < r.rows(); ++i) {
        if (r.is_null(i, 2)) continue;
        const auto type = cursor_type_from_postgres(r.text(i, 2));
        if (type) found[{r.text(i, 0), r.text(i, 1)}] = Found{*type, r.text(i, 3)};
      }
    } catch (const std::exception&) {
      // Reported by check_sources as not checked.
    }
  }
  const auto type_of = [&](const std::optional<Asked>& a) -> const Found* {
    if (!a) return nullptr;
    const auto it = found.find({a->table, a->cursor});
    return it == found.end() ? nullptr : &it->second;
  };
  const auto same_zone = [](const std::string& a, const std::string& b) {
    try {
      return date::locate_zone(a) == date::locate_zone(b);
    } catch (const std::exception&) {
      return a == b;
    }
  };
  int errors = 0;
  const auto refuse = [&](const TableConfig::WrittenInput& where, const std::string& message) {
    err << ConfigError{where.location.file, where.location.line, where.location.column, where.key_path, message}
               .to_string()
        << '\n';
    ++errors;
  };
  for (const PipelineConfig& p : config.pipelines) {
    for (const TableConfig& t : p.tables) {
      if (t.inputs.empty() || t.inputs_written.empty()) continue;
      const Found* own = type_of(cursor_of(p.name, t.name));
      if (own != nullptr && own->type == CursorType::Integer) {
        refuse(t.inputs_written.front(), "inputs bound a table by time, and cursor " + t.cursor +
                                             " is an integer; give the table a time cursor, or remove its inputs");
      }
      for (std::size_t i = 0; i < t.inputs.size() && i < t.inputs_written.size(); ++i) {
        const TableRef& input = t.inputs[i];
        const auto asked = cursor_of(input.pipeline, input.table);
        const Found* theirs = type_of(asked);
        if (theirs == nullptr) continue;
        if (theirs->type == CursorType::Integer) {
          refuse(t.inputs_written[i], "input " + input.display() +
                                          " has an integer cursor, whose watermark is an id that says nothing of "
                                          "time, so it cannot bound this table; remove it from inputs, or give it a "
                                          "time cursor");
        } else if ((theirs->type == CursorType::Timestamp || theirs->type == CursorType::Date) &&
                   !same_zone(theirs->source_zone, asked->pipeline->timezone)) {
          refuse(t.inputs_written[i],
                 "input " + input.display() + " has a " + std::string(cursor_type_name(theirs->type)) +
                     " cursor, whose watermark is a wall-clock value of its source's time zone (" +
                     theirs->source_zone + "), but pipeline " + asked->pipeline->name + " reads it in " +
                     asked->pipeline->timezone + ": set timezone: " + theirs->source_zone + " on pipeline " +
                     asked->pipeline->name);
        }
      }
    }
  }
  return errors;
}

// An `initial` later than now claims rows that do not exist yet (a run
// refuses it too, against the source's clock).
int check_initials(const Config& config, Instant now, std::ostream& err) {
  int errors = 0;
  for (const PipelineConfig& p : config.pipelines) {
    for (const TableConfig& t : p.tables) {
      if (!t.initial) continue;
      const auto at = parse_instant(*t.initial);
      if (!at || *at <= now) continue;
      fmt::print(err, "{}: pipeline {}, table {}: initial {} is in the future; a watermark there would claim rows "
                 "that do not exist yet\n", p.location.file, p.name, t.name, *t.initial);
      ++errors;
    }
  }
  return errors;
}

}  // namespace

int run_validate(const ValidateOptions& command_line, Instant now, std::ostream& out, std::ostream& err) {
  const auto loaded = load_config(command_line.config_path);
  if (!loaded.value) {
    for (const ConfigError& e : loaded.errors) err << e.to_string() << '\n';
    fmt::print(err, "{} error{} found; configuration is invalid\n", loaded.errors.size(),
               loaded.errors.size() == 1 ? "" : "s");
    return kExitUsage;
  }
  const Config& config = *loaded.value;
  // What only the sources and the clock can tell, checked before the
  // summary so that "valid" is said only of a configuration that is.
  std::ostringstream sources;
  std::ostringstream targets;
  // The web configuration's certificate and key load as serve loads them.
  const auto security = make_endpoint_security(config.daemon.metrics);
  if (!security) err << security.error() << '\n';
  const int errors = (security ? 0 : 1) + check_initials(config, now, err) + check_sources(config, sources, err) +
                     check_inputs(config, err) + check_targets(config, targets, err);
  if (errors > 0) {
    fmt::print(err, "{} error{} found; configuration is invalid\n", errors, errors == 1 ? "" : "s");
    return kExitUsage;
  }
  fmt::print(out, "{}: valid\n", config.daemon.file);
  fmt::print(out, "state: {}\n", config.daemon.state);
  for (const ConnectionConfig& c : config.daemon.connections) {
    fmt::print(out, "connection {}: {}\n", c.name, describe_connection(c));
  }
  fmt::print(out, "metrics: {}://{} ({})\n", security->tls ? "https" : "http", config.daemon.metrics.listen,
             config.daemon.metrics.web ? "web_config " + web_config_path(config.daemon) + ": " + security->describe()
                                       : "no web_config");
  fmt::print(out, "pipelines_dir: {} ({} pipeline{})\n", pipelines_dir_path(config.daemon), config.pipelines.size(),
             config.pipelines.size() == 1 ? "" : "s");
  for (const PipelineConfig& p : config.pipelines) {
    fmt::print(out, "pipeline {} ({}): {} -> {}, timezone {}, stale_after {}\n", p.name, p.location.file, p.source,
               p.target, p.timezone, format_duration(p.stale_after));
    for (const TableConfig& t : p.tables) print_table(out, p, t, now);
  }
  out << sources.str() << targets.str();
  return kExitOk;
}

}  // namespace tidemark
