#include "core/config/config_parser.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <string_view>

#include <yaml-cpp/depthguard.h>

#include "core/config/config_reader.h"
#include "core/config/config_schema.h"
#include "core/config/table_modes.h"

namespace tidemark {
namespace {

ConfigError file_error_at(const ConfigText& file, const YAML::Mark& mark, std::string message) {
  ConfigError error;
  error.file = file.path;
  error.line = mark.is_null() ? 0 : mark.line + 1;
  error.column = mark.is_null() ? 0 : mark.column + 1;
  error.message = std::move(message);
  return error;
}

// The 1-based line where a second YAML document starts, or 0 when the text
// holds one: a "---" line after the first document's content, or content
// after a "..." line. yaml-cpp's LoadAll can loop forever on some broken
// second documents, so they are found by their markers (which YAML allows
// only at the start of a line) and never parsed.
int second_document_line(std::string_view text) {
  int line = 1;
  bool content_seen = false;
  bool ended = false;  // a "..." closed the first document
  for (std::size_t start = 0; start < text.size(); ++line) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view l = text.substr(start, end - start);
    start = end + 1;
    const auto is_marker = [&](std::string_view m) {
      return l.rfind(m, 0) == 0 && (l.size() == 3 || l[3] == ' ' || l[3] == '\t' || l[3] == '\r');
    };
    const std::size_t first = l.find_first_not_of(" \t\r");
    const bool blank = first == std::string_view::npos || l[first] == '#';
    if (is_marker("---")) {
      if (content_seen || ended) return line;
      const std::size_t rest = l.find_first_not_of(" \t\r", 3);
      content_seen = rest != std::string_view::npos && l[rest] != '#';  // "--- {a: 1}"
    } else if (is_marker("...")) {
      ended = ended || content_seen;
    } else if (!blank && (content_seen || l[first] != '%')) {
      if (ended) return line;
      content_seen = true;
    }
  }
  return 0;
}

// Parses YAML text holding one document; on a syntax error records it and
// returns nothing. A second document is an error too (it would otherwise be
// dropped without a word), but the first is still returned and checked.
// `second_document` receives that error, for the caller to add after the
// first document's own errors (they come first in the file).
std::optional<YAML::Node> load_yaml(const ConfigText& file, std::vector<ConfigError>& errors,
                                    std::optional<ConfigError>& second_document) {
  // YAML is text: a control character other than tab, newline and carriage
  // return is not allowed, and a NUL byte makes yaml-cpp loop until memory
  // runs out. Refuse them before parsing.
  YAML::Mark at;
  at.line = 0;
  at.column = 0;
  for (const char c : file.text) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte < 0x20 && c != '\t' && c != '\n' && c != '\r') || byte == 0x7f) {
      char code[8];
      std::snprintf(code, sizeof code, "0x%02x", byte);
      errors.push_back(file_error_at(file, at,
                                     std::string("a control character (") + code +
                                         "): a configuration file is YAML text; is this the right file?"));
      return std::nullopt;
    }
    if (c == '\n') {
      ++at.line;
      at.column = 0;
    } else {
      ++at.column;
    }
  }
  try {
    YAML::Node root = YAML::Load(file.text);
    if (const int line = second_document_line(file.text); line > 0) {
      ConfigError error;
      error.file = file.path;
      error.line = line;
      error.column = 1;
      error.message =
          "a second YAML document (after \"---\" or \"...\"): a file holds one document; remove the marker line "
          "or move what follows it to a file of its own";
      second_document = std::move(error);
    }
    return root;
  } catch (const YAML::DeepRecursion& e) {
    errors.push_back(file_error_at(file, e.mark,
                                   "YAML nested too deeply: lists and maps inside one another stop at a few "
                                   "hundred levels (a configuration needs a handful)"));
    return std::nullopt;
  } catch (const YAML::ParserException& e) {
    errors.push_back(file_error_at(file, e.mark, "YAML syntax error: " + e.msg));
    return std::nullopt;
  }
}

// Reads a file of one map (the daemon file, a web configuration) into
// `model`, whose `file` it sets; every error goes to `errors`. The
// document's root, or nothing when the YAML itself is broken.
template <class Model>
std::optional<YAML::Node> read_document(const ConfigText& file, const MapSchema<Model>& schema, Model& model,
                                        std::vector<ConfigError>& errors) {
  std::optional<ConfigError> second_document;
  auto root = load_yaml(file, errors, second_document);
  if (!root) return root;
  model.file = file.path;
  ConfigReader reader(file.path, errors);
  reader.read_map(*root, schema, model);
  if (second_document) errors.push_back(std::move(*second_document));
  return root;
}

void check_connection(ConfigReader& r, const YAML::Node& root, const DaemonConfig& daemon, const char* key,
                      const std::string& name) {
  if (name.empty() || daemon.find_connection(name) != nullptr) return;
  std::string known;
  for (const auto& c : daemon.connections) known += (known.empty() ? "" : ", ") + c.name;
  ConfigReader::Scope scope(r, key);
  r.error(root[key], "no connection named \"" + name + "\" in " + daemon.file + " (known: " + known + ")");
}

// A table whose rows are inserted once commits them with its watermark
// in one transaction, which only a target that holds the state can. Told
// with the file's other errors: the tables read so far are enough.
void check_state_in_target(const DaemonConfig& daemon, const PipelineConfig& p, std::vector<ConfigError>& errors) {
  if (p.target.empty() || p.target == daemon.state) return;
  for (const TableConfig& t : p.tables) {
    if (!table_mode(t.mode).needs_state_in_target) continue;
    errors.push_back(ConfigError{
        t.mode_location.file, t.mode_location.line, t.mode_location.column, t.mode_key_path,
        std::string("mode: ") + table_mode_name(t.mode) + " inserts each row once, in the transaction that moves "
            "its watermark, which needs the state in the target's database: pipeline " + p.name +
            " writes to connection " + p.target + " and the state lives in " + daemon.state + "; set state: " +
            p.target + " in " + daemon.file + ", or use mode: incremental with a key"});
  }
}

ConfigError error_at(const TableConfig::WrittenInput& item, std::string message) {
  return ConfigError{item.location.file, item.location.line, item.location.column, item.key_path,
                     std::move(message)};
}

// The configured tables that "a.b.c" can name: every split at a dot into
// a pipeline and a table of it (names may hold dots themselves).
std::vector<TableRef> tables_named(const Config& config, const std::string& name) {
  std::vector<TableRef> out;
  for (std::size_t dot = name.find('.'); dot != std::string::npos; dot = name.find('.', dot + 1)) {
    const PipelineConfig* p = config.find_pipeline(name.substr(0, dot));
    const TableConfig* t = p == nullptr ? nullptr : p->find_table(name.substr(dot + 1));
    if (t != nullptr) out.push_back(TableRef{p->name, t->name, t->mode, p->zone, t->lookback});
  }
  return out;
}

// Whether a pipeline that failed to parse may be the one `name` means:
// its tables are unknown, so an input into it is not reported missing.
bool names_broken_pipeline(const std::set<std::string>& broken, const std::string& name) {
  for (std::size_t dot = name.find('.'); dot != std::string::npos; dot = name.find('.', dot + 1)) {
    if (broken.count(name.substr(0, dot))) return true;
  }
  return false;
}

// Resolves every table's `inputs:` to configured tables, gives each input
// its dependents, and refuses a name that is no table, the table itself,
// or a cycle (a table that would wait for itself), each where it is written.
void resolve_inputs(Config& config, const std::set<std::string>& broken, std::vector<ConfigError>& errors) {
  using Edges = std::map<std::pair<std::string, std::string>, std::vector<std::pair<std::string, std::string>>>;
  Edges waits_for;
  for (PipelineConfig& p : config.pipelines) {
    for (TableConfig& t : p.tables) {
      for (const TableConfig::WrittenInput& item : t.inputs_written) {
        const std::vector<TableRef> found = tables_named(config, item.name);
        if (found.empty()) {
          if (names_broken_pipeline(broken, item.name)) continue;
          errors.push_back(error_at(item, "no table \"" + item.name +
                                              "\" in this configuration: name an input as pipeline.table, a "
                                              "table of any pipeline file"));
          continue;
        }
        if (found.size() > 1) {
          errors.push_back(error_at(item, "\"" + item.name + "\" names both " + found[0].display() + " (pipeline " +
                                              found[0].pipeline + ") and " + found[1].display() + " (pipeline " +
                                              found[1].pipeline + "); rename one of the pipelines"));
          continue;
        }
        if (found[0].pipeline == p.name && found[0].table == t.name) {
          errors.push_back(error_at(item, "a table cannot be its own input; name the tables whose targets its "
                                          "source reads"));
          continue;
        }
        t.inputs.push_back(found[0]);
        waits_for[{p.name, t.name}].push_back({found[0].pipeline, found[0].table});
      }
    }
  }
  // A cycle: every table in it would wait for the next, for ever. Each is
  // reported once, at the input that closes it.
  std::set<std::pair<std::string, std::string>> done;
  std::vector<std::pair<std::string, std::string>> path;
  const std::function<void(const std::pair<std::string, std::string>&)> visit =
      [&](const std::pair<std::string, std::string>& table) {
        if (done.count(table)) return;
        const auto on_path = std::find(path.begin(), path.end(), table);
        if (on_path != path.end()) {
          std::string cycle;
          for (auto it = on_path; it != path.end(); ++it) cycle += it->first + "." + it->second + " -> ";
          cycle += table.first + "." + table.second;
          const auto& closing = path.back();
          const TableConfig* t = config.find_pipeline(closing.first)->find_table(closing.second);
          for (const TableConfig::WrittenInput& item : t->inputs_written) {
            const std::vector<TableRef> named = tables_named(config, item.name);
            if (named.size() == 1 && named[0].pipeline == table.first && named[0].table == table.second) {
              errors.push_back(error_at(item, "inputs form a cycle (" + cycle +
                                                  "): each table would wait for the next for ever; remove one of "
                                                  "these inputs"));
            }
          }
          return;
        }
        path.push_back(table);
        const auto next = waits_for.find(table);
        if (next != waits_for.end()) {
          for (const auto& input : next->second) visit(input);
        }
        path.pop_back();
        done.insert(table);
      };
  for (const auto& [table, inputs] : waits_for) visit(table);
  std::map<std::pair<std::string, std::string>, TableConfig*> by_name;
  for (PipelineConfig& p : config.pipelines) {
    for (TableConfig& t : p.tables) by_name[{p.name, t.name}] = &t;
  }
  for (const PipelineConfig& p : config.pipelines) {
    for (const TableConfig& t : p.tables) {
      for (const TableRef& input : t.inputs) {
        by_name.at({input.pipeline, input.table})->dependents.push_back(
            TableRef{p.name, t.name, t.mode, p.zone, t.lookback});
      }
    }
  }
}

}  // namespace

ParseOutcome<DaemonConfig> parse_daemon_config(const ConfigText& file) {
  ParseOutcome<DaemonConfig> out;
  DaemonConfig config;
  const auto root = read_document(file, daemon_schema(), config, out.errors);
  if (!root) return out;
  if (out.errors.empty()) {
    out.value = std::move(config);
  } else if (root->IsMap()) {
    out.partial = std::move(config);
  }
  return out;
}

ParseOutcome<WebConfig> parse_web_config(const ConfigText& file) {
  ParseOutcome<WebConfig> out;
  WebConfig config;
  if (read_document(file, web_config_schema(), config, out.errors) && out.errors.empty()) {
    out.value = std::move(config);
  }
  return out;
}

PipelineFileOutcome parse_pipeline_file(const DaemonConfig& daemon, const ConfigText& file, DaemonCheck daemon_check) {
  PipelineFileOutcome out;
  out.path = file.path;
  std::optional<ConfigError> second_document;
  const auto root = load_yaml(file, out.errors, second_document);
  if (!root) return out;
  ConfigReader reader(file.path, out.errors);
  PipelineConfig pipeline;
  reader.read_map(*root, pipeline_schema(), pipeline);
  if (!root->IsMap()) {
    if (second_document) out.errors.push_back(std::move(*second_document));
    return out;
  }
  if (daemon_check == DaemonCheck::Connections) {
    check_connection(reader, *root, daemon, "source", pipeline.source);
    check_connection(reader, *root, daemon, "target", pipeline.target);
    check_state_in_target(daemon, pipeline, out.errors);
  }
  if (!pipeline.name.empty()) {
    out.name = pipeline.name;
    out.name_at = reader.location((*root)["pipeline"]);
  }
  if (second_document) out.errors.push_back(std::move(*second_document));
  if (out.errors.empty()) out.pipeline = std::move(pipeline);
  return out;
}

ParseOutcome<Config> parse_config(const DaemonConfig& daemon, const std::vector<ConfigText>& pipeline_files,
                                  DaemonCheck daemon_check) {
  std::vector<PipelineFileOutcome> files;
  files.reserve(pipeline_files.size());
  for (const ConfigText& file : pipeline_files) files.push_back(parse_pipeline_file(daemon, file, daemon_check));
  return assemble_config(daemon, std::move(files));
}

ParseOutcome<Config> assemble_config(const DaemonConfig& daemon, std::vector<PipelineFileOutcome> files) {
  ParseOutcome<Config> out;
  Config config;
  config.daemon = daemon;
  std::map<std::string, std::string> first_file_of;  // pipeline name -> file
  std::set<std::string> broken;  // pipelines whose file has errors: their tables are not known
  for (PipelineFileOutcome& file : files) {
    out.errors.insert(out.errors.end(), file.errors.begin(), file.errors.end());
    bool duplicate = false;
    if (!file.name.empty()) {
      const auto [it, inserted] = first_file_of.emplace(file.name, file.path);
      if (!inserted) {
        duplicate = true;
        out.errors.push_back(ConfigError{file.name_at.file, file.name_at.line, file.name_at.column, "pipeline",
                                         "pipeline \"" + file.name + "\" is already defined in " + it->second});
      }
    }
    if (file.pipeline && !duplicate) {
      config.pipelines.push_back(std::move(*file.pipeline));
    } else if (!file.name.empty()) {
      broken.insert(file.name);
    }
  }
  resolve_inputs(config, broken, out.errors);
  // A reconcile compares its source with the whole target table, and a
  // run of some modes makes the whole target table equal to its source:
  // where several tables load into one target table (shards), either
  // would delete the others' rows as gone from its own source.
  for (const PipelineConfig& p : config.pipelines) {
    for (const TableConfig& t : p.tables) {
      const bool whole = table_mode(t.mode).replaces_whole_target;
      // A partition table's reconcile rewrites its partitions, as its runs do.
      const bool reconciles_keys = t.deletes && table_mode(t.mode).reconcile == ReconcileBy::Keys;
      if (!whole && !reconciles_keys) continue;
      const std::string mode = table_mode_name(t.mode);
      const std::optional<std::string> conflict =
          config.whole_target_conflict(p, t, whole ? "a " + mode + " run" : "a reconcile");
      if (!conflict) continue;
      const SourceLocation& where = whole ? t.mode_location : t.deletes->location;
      out.errors.push_back(ConfigError{where.file, where.line, where.column,
                                       whole ? t.mode_key_path : t.deletes->key_path,
                                       *conflict + (whole ? "; mode: " + mode + " needs a target table of its own"
                                                          : "; deletes: needs a target table of its own")});
    }
  }
  std::sort(config.pipelines.begin(), config.pipelines.end(),
            [](const PipelineConfig& a, const PipelineConfig& b) { return a.name < b.name; });
  if (out.errors.empty()) out.value = std::move(config);
  return out;
}

}  // namespace tidemark
