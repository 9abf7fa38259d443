#include "core/config_parser.h"

#include <algorithm>
#include <map>

#include "core/config_reader.h"
#include "core/config_schema.h"

namespace tidemark {
namespace {

// Parses YAML text; on a syntax error records it and returns nothing.
std::optional<YAML::Node> load_yaml(const ConfigText& file, std::vector<ConfigError>& errors) {
  try {
    return YAML::Load(file.text);
  } catch (const YAML::ParserException& e) {
    ConfigError error;
    error.file = file.path;
    error.line = e.mark.is_null() ? 0 : e.mark.line + 1;
    error.column = e.mark.is_null() ? 0 : e.mark.column + 1;
    error.message = "YAML syntax error: " + e.msg;
    errors.push_back(std::move(error));
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
  const auto root = load_yaml(file, out.errors);
  if (!root) return out;
  DaemonConfig config;
  config.file = file.path;
  ConfigReader reader(file.path, out.errors);
  reader.read_map(*root, daemon_schema(), config);
  if (out.errors.empty()) out.value = std::move(config);
  return out;
}

ParseOutcome<Config> parse_config(const DaemonConfig& daemon, const std::vector<ConfigText>& pipeline_files) {
  ParseOutcome<Config> out;
  Config config;
  config.daemon = daemon;
  std::map<std::string, std::string> first_file_of;  // pipeline name -> file
  for (const ConfigText& file : pipeline_files) {
    const auto root = load_yaml(file, out.errors);
    if (!root) continue;
    ConfigReader reader(file.path, out.errors);
    const std::size_t errors_before = out.errors.size();
    PipelineConfig pipeline;
    reader.read_map(*root, pipeline_schema(), pipeline);
    if (!root->IsMap()) continue;
    check_connection(reader, *root, daemon, "source", pipeline.source);
    check_connection(reader, *root, daemon, "target", pipeline.target);
    if (!pipeline.name.empty()) {
      const auto [it, inserted] = first_file_of.emplace(pipeline.name, file.path);
      if (!inserted) {
        ConfigReader::Scope scope(reader, "pipeline");
        reader.error((*root)["pipeline"], "pipeline \"" + pipeline.name + "\" is already defined in " + it->second);
      }
    }
    if (out.errors.size() == errors_before) config.pipelines.push_back(std::move(pipeline));
  }
  std::sort(config.pipelines.begin(), config.pipelines.end(),
            [](const PipelineConfig& a, const PipelineConfig& b) { return a.name < b.name; });
  if (out.errors.empty()) out.value = std::move(config);
  return out;
}

}  // namespace tidemark
