#include "daemon/validate_command.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <map>
#include <ostream>
#include <sstream>

#include "core/config_model.h"
#include "core/dsn_mask.h"
#include "core/duration.h"
#include "core/instant_text.h"
#include "daemon/command_support.h"
#include "daemon/config_loader.h"
#include "daemon/exit_code.h"

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

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

void print_table(std::ostream& out, const PipelineConfig& p, const TableConfig& t, Instant now) {
  if (t.mode == TableMode::Incremental) {
    fmt::print(out, "  table {}: incremental {} -> {}, key [{}], cursor {}, lookback {}", t.name,
               t.source_table ? t.source_table->display() : "?", t.target_table.display(), join(t.key), t.cursor,
               describe_span(t.lookback));
    if (t.max_window) fmt::print(out, ", max_window {}", describe_span(*t.max_window));
  } else {
    static const char* const kUnits[] = {"hour", "day", "month"};
    fmt::print(out, "  table {}: partition by {} of {} -> {}", t.name, kUnits[static_cast<int>(t.partition->unit)],
               t.partition->column, t.target_table.display());
  }
  if (t.initial) fmt::print(out, ", initial {}", *t.initial);
  fmt::print(out, ", schedule \"{}\"\n    next:", t.schedule->expression());
  Instant from = now;
  for (int i = 0; i < 3; ++i) {
    const auto next = t.schedule->next_after(from, *p.zone);
    if (!next) break;
    fmt::print(out, " {}", format_instant(*next));
    from = *next;
  }
  fmt::print(out, "\n");
}

// What validate learns by connecting to a source: whether a run's safe
// horizon can see every writer there.
struct SourceProbe {
  std::string unreachable;  // why it could not be asked; empty when it answered
  bool in_recovery = false;
  bool sees_all_sessions = true;
};

SourceProbe probe_source(const Config& config, const std::string& name) {
  SourceProbe probe;
  try {
    const auto connection = connect_to_source(config, name);
    const PgResult r = connection->exec(
        "select pg_is_in_recovery(), (select r.rolsuper or pg_has_role(current_user, 'pg_read_all_stats', 'member')"
        " from pg_roles r where r.rolname = current_user)");
    probe.in_recovery = r.boolean(0, 0);
    probe.sees_all_sessions = r.boolean(0, 1);
  } catch (const std::exception& e) {
    probe.unreachable = e.what();
  }
  return probe;
}

// Checks what only the sources can tell: a table without a lookback needs
// a horizon that sees every writer. Prints each source's answer; returns
// how many tables would be refused.
int check_sources(const Config& config, std::ostream& out, std::ostream& err) {
  std::map<std::string, SourceProbe> probes;
  for (const PipelineConfig& p : config.pipelines) {
    if (!probes.count(p.source)) probes[p.source] = probe_source(config, p.source);
  }
  for (const auto& [name, probe] : probes) {
    const ConnectionConfig* c = config.daemon.find_connection(name);
    if (!probe.unreachable.empty()) {
      fmt::print(out, "source {}: not checked ({})\n", name, probe.unreachable);
      continue;
    }
    fmt::print(out, "source {}: {}, {}\n", name,
               !probe.in_recovery      ? "primary"
               : c && !c->primary.empty() ? "hot standby; horizon read on " + c->primary
                                          : std::string("hot standby without a primary: connection"),
               probe.sees_all_sessions ? "sees every session's transactions"
                                       : "cannot see other sessions' transactions (no pg_monitor)");
  }
  int refused = 0;
  for (const PipelineConfig& p : config.pipelines) {
    const SourceProbe& probe = probes[p.source];
    const ConnectionConfig* c = config.daemon.find_connection(p.source);
    if (!probe.unreachable.empty()) continue;
    for (const TableConfig& t : p.tables) {
      if (t.mode != TableMode::Incremental || !t.lookback.is_zero()) continue;
      std::string why;
      if (!probe.sees_all_sessions) {
        why = "the role of source " + p.source +
              " cannot see other sessions' transactions, so rows still in flight cannot be held back; grant it "
              "pg_monitor, or set a lookback longer than the longest write transaction";
      } else if (probe.in_recovery && (c == nullptr || c->primary.empty())) {
        why = "source " + p.source +
              " is a hot standby, which cannot see the primary's open transactions; give the connection a "
              "primary: (a connection to its primary), or set a lookback longer than the longest write "
              "transaction plus the replication lag";
      }
      if (why.empty()) continue;
      fmt::print(err, "{}: pipeline {}, table {}: lookback 0s is refused: {}\n", p.location.file, p.name, t.name, why);
      ++refused;
    }
  }
  return refused;
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

int run_validate(const CommandLine& command_line, Instant now, std::ostream& out, std::ostream& err) {
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
  const int errors = check_initials(config, now, err) + check_sources(config, sources, err);
  if (errors > 0) {
    fmt::print(err, "{} error{} found; configuration is invalid\n", errors, errors == 1 ? "" : "s");
    return kExitUsage;
  }
  fmt::print(out, "{}: valid\n", config.daemon.file);
  fmt::print(out, "state: {}\n", config.daemon.state);
  for (const ConnectionConfig& c : config.daemon.connections) {
    fmt::print(out, "connection {}: {}\n", c.name, describe_connection(c));
  }
  fmt::print(out, "pipelines_dir: {} ({} pipeline{})\n", pipelines_dir_path(config.daemon), config.pipelines.size(),
             config.pipelines.size() == 1 ? "" : "s");
  for (const PipelineConfig& p : config.pipelines) {
    fmt::print(out, "pipeline {} ({}): {} -> {}, timezone {}, stale_after {}\n", p.name, p.location.file, p.source,
               p.target, p.timezone, format_duration(p.stale_after));
    for (const TableConfig& t : p.tables) print_table(out, p, t, now);
  }
  out << sources.str();
  return kExitOk;
}

}  // namespace tidemark
