#include "daemon/validate_command.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <ostream>

#include "core/config_model.h"
#include "core/dsn_mask.h"
#include "core/duration.h"
#include "core/instant_text.h"
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
  return kExitOk;
}

}  // namespace tidemark
