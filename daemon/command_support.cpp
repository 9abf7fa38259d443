#include "daemon/command_support.h"

#include <filesystem>
#include <ostream>

#include "daemon/config_loader.h"
#include "daemon/dsn_resolver.h"

namespace tidemark {

std::shared_ptr<const Config> load_config_or_report(const std::string& path, std::ostream& err) {
  auto loaded = load_config(path);
  if (!loaded.value) {
    for (const ConfigError& e : loaded.errors) err << e.to_string() << '\n';
    return nullptr;
  }
  return std::make_shared<const Config>(std::move(*loaded.value));
}

std::unique_ptr<PgConnection> connect_to(const Config& config, const std::string& connection_name) {
  const ConnectionConfig* connection = config.daemon.find_connection(connection_name);
  if (connection == nullptr) throw std::runtime_error("no connection named " + connection_name);
  const std::string base_dir = std::filesystem::path(config.daemon.file).parent_path().string();
  return std::make_unique<PgConnection>(resolve_dsn(*connection, base_dir), connection_name);
}

std::unique_ptr<PgConnection> connect_to_source(const Config& config, const std::string& connection_name) {
  auto connection = connect_to(config, connection_name);
  make_read_only_source(*connection);
  return connection;
}

void PipelineConnections::open_state(const Config& config) { state = connect_to(config, config.daemon.state); }

void PipelineConnections::open_data(const Config& config, const PipelineConfig& pipeline) {
  source = connect_to_source(config, pipeline.source);
  source_primary.reset();
  const ConnectionConfig* source_config = config.daemon.find_connection(pipeline.source);
  if (source_config != nullptr && !source_config->primary.empty()) {
    source_primary = connect_to_source(config, source_config->primary);
    replay_timeout = source_config->replay_timeout;
  }
  separate_target.reset();
  if (pipeline.target != config.daemon.state) separate_target = connect_to(config, pipeline.target);
}

bool state_schema_exists(PgConnection& state) {
  return state.exec("select to_regclass('tidemark.runs') is not null").boolean(0, 0);
}

bool state_schema_exists_or_say(PgConnection& state, const Config& config, std::ostream& err) {
  if (state_schema_exists(state)) return true;
  err << "no tidemark state yet on " << config.daemon.state << " (tidemark migrate or a first run creates it)\n";
  return false;
}

}  // namespace tidemark
