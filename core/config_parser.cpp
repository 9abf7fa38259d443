#include "core/config_parser.h"

#include <algorithm>
#include <map>
#include <string_view>

#include <yaml-cpp/depthguard.h>

#include "core/config_reader.h"
#include "core/config_schema.h"

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

// The line of the second document's "---" (or "..."), 1-based; 0 when it
// cannot be told (a document that starts with "---" is the first one).
int second_document_line(std::string_view text) {
  int line = 1;
  bool content_seen = false;
  for (std::size_t start = 0; start < text.size(); ++line) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view l = text.substr(start, end - start);
    const bool marker = (l.rfind("---", 0) == 0 || l.rfind("...", 0) == 0) &&
                        (l.size() == 3 || l[3] == ' ' || l[3] == '\t' || l[3] == '\r');
    if (marker && (content_seen || l.rfind("...", 0) == 0)) return line;
    const std::size_t first = l.find_first_not_of(" \t\r");
    if (!marker && first != std::string_view::npos && l[first] != '#' && l[first] != '%') content_seen = true;
    start = end + 1;
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
  try {
    std::vector<YAML::Node> documents = YAML::LoadAll(file.text);
    if (documents.size() > 1) {
      ConfigError error = file_error_at(file, documents[1].Mark(),
                                        "a second YAML document (after \"---\"): a file holds one document; "
                                        "remove the \"---\" line or move what follows it to a file of its own");
      if (const int line = second_document_line(file.text); line > 0) {
        error.line = line;
        error.column = 1;
      }
      second_document = std::move(error);
    }
    return documents.empty() ? YAML::Node() : documents[0];
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

void check_connection(ConfigReader& r, const YAML::Node& root, const DaemonConfig& daemon, const char* key,
                      const std::string& name) {
  if (name.empty() || daemon.find_connection(name) != nullptr) return;
  std::string known;
  for (const auto& c : daemon.connections) known += (known.empty() ? "" : ", ") + c.name;
  ConfigReader::Scope scope(r, key);
  r.error(root[key], "no connection named \"" + name + "\" in " + daemon.file + " (known: " + known + ")");
}

}  // namespace

ParseOutcome<DaemonConfig> parse_daemon_config(const ConfigText& file) {
  ParseOutcome<DaemonConfig> out;
  std::optional<ConfigError> second_document;
  const auto root = load_yaml(file, out.errors, second_document);
  if (!root) return out;
  DaemonConfig config;
  config.file = file.path;
  ConfigReader reader(file.path, out.errors);
  reader.read_map(*root, daemon_schema(), config);
  if (second_document) out.errors.push_back(std::move(*second_document));
  if (out.errors.empty()) {
    out.value = std::move(config);
  } else if (root->IsMap()) {
    out.partial = std::move(config);
  }
  return out;
}

ParseOutcome<Config> parse_config(const DaemonConfig& daemon, const std::vector<ConfigText>& pipeline_files,
                                  DaemonCheck daemon_check) {
  ParseOutcome<Config> out;
  Config config;
  config.daemon = daemon;
  std::map<std::string, std::string> first_file_of;  // pipeline name -> file
  for (const ConfigText& file : pipeline_files) {
    std::optional<ConfigError> second_document;
    const auto root = load_yaml(file, out.errors, second_document);
    if (!root) continue;
    ConfigReader reader(file.path, out.errors);
    const std::size_t errors_before = out.errors.size();
    PipelineConfig pipeline;
    reader.read_map(*root, pipeline_schema(), pipeline);
    if (!root->IsMap()) {
      if (second_document) out.errors.push_back(std::move(*second_document));
      continue;
    }
    if (daemon_check == DaemonCheck::Connections) {
      check_connection(reader, *root, daemon, "source", pipeline.source);
      check_connection(reader, *root, daemon, "target", pipeline.target);
    }
    if (!pipeline.name.empty()) {
      const auto [it, inserted] = first_file_of.emplace(pipeline.name, file.path);
      if (!inserted) {
        ConfigReader::Scope scope(reader, "pipeline");
        reader.error((*root)["pipeline"], "pipeline \"" + pipeline.name + "\" is already defined in " + it->second);
      }
    }
    if (second_document) out.errors.push_back(std::move(*second_document));
    if (out.errors.size() == errors_before) config.pipelines.push_back(std::move(pipeline));
  }
  std::sort(config.pipelines.begin(), config.pipelines.end(),
            [](const PipelineConfig& a, const PipelineConfig& b) { return a.name < b.name; });
  if (out.errors.empty()) out.value = std::move(config);
  return out;
}

}  // namespace tidemark
