#include "daemon/commands/command_support.h"

#include <filesystem>
#include <ostream>

#include "daemon/commands/exit_code.h"
#include "daemon/config_loader.h"
#include "daemon/pg/dsn_resolver.h"
#include "daemon/pg/session_probe.h"
#include "daemon/pg/state_schema.h"
#include "daemon/pg/state_reader.h"

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

namespace {

PooledConnection session(ConnectionPool* pool, const Config& config, const std::string& name, SessionKind kind) {
  return pool != nullptr ? pool->acquire(config, name, kind) : open_session(config, name, kind);
}

}  // namespace

void PipelineConnections::open_state(const Config& config) {
  state = session(pool, config, config.daemon.state, SessionKind::ReadWrite);
  if (!separate_target) follow_source_time_zone();
}

void PipelineConnections::open_data(const Config& config, const PipelineConfig& pipeline) {
  source = session(pool, config, pipeline.source, SessionKind::Source);
  source_primary.reset();
  const ConnectionConfig* source_config = config.daemon.find_connection(pipeline.source);
  if (source_config != nullptr && !source_config->primary.empty()) {
    source_primary = session(pool, config, source_config->primary, SessionKind::Source);
    replay_timeout = source_config->replay_timeout;
  }
  separate_target.reset();
  if (pipeline.target != config.daemon.state) {
    separate_target = session(pool, config, pipeline.target, SessionKind::ReadWrite);
  }
  follow_source_time_zone();
}

void PipelineConnections::use_pipeline_time_zone(const PipelineConfig& pipeline) {
  source->set_time_zone(pipeline.timezone);
  follow_source_time_zone();
}

void PipelineConnections::follow_source_time_zone() {
  // A value whose type differs between the sides (a timestamp loaded into
  // a timestamptz, a timestamptz into a date) is converted in the source's
  // time zone, the zone its wall-clock values are written in: the
  // target's own default plays no part.
  PgConnection* target = separate_target ? separate_target.get() : state.get();
  if (target != nullptr && source) target->adopt_time_zone(*source);
}

std::optional<std::string> state_session_refusal(const Config& config) {
  try {
    const ConnectionConfig* connection = config.daemon.find_connection(config.daemon.state);
    if (connection == nullptr) return std::nullopt;  // validation reports it
    const std::string base_dir = std::filesystem::path(config.daemon.file).parent_path().string();
    const std::string dsn = resolve_dsn(*connection, base_dir);
    PgConnection state(dsn, config.daemon.state);
    const SessionProbe probe = probe_session(state, dsn);
    if (probe.verdict == SessionVerdict::NotKept) return probe.message;
  } catch (const std::exception&) {
    // Unreachable or unresolvable: not this check's to report.
  }
  return std::nullopt;
}

std::optional<int> prepare_state(const Config& config, const std::string& command, std::ostream& err,
                                 bool migrate) {
  if (const auto refusal = state_session_refusal(config)) {
    err << "tidemark " << command << ": " << *refusal << '\n';
    return kExitUsage;
  }
  try {
    if (migrate) migrate_state_schema(*connect_to(config, config.daemon.state));
  } catch (const std::exception& e) {
    err << "tidemark " << command << ": " << e.what() << '\n';
    return kExitFailure;
  }
  return std::nullopt;
}

bool state_schema_exists(PgConnection& state) {
  const auto exists = StateReader(state).schema_exists();
  if (!exists) throw std::runtime_error(exists.error());
  return *exists;
}

bool state_schema_exists_or_say(PgConnection& state, const Config& config, std::ostream& err) {
  if (state_schema_exists(state)) return true;
  err << "no tidemark state yet on " << config.daemon.state << " (tidemark migrate or a first run creates it)\n";
  return false;
}

}  // namespace tidemark
