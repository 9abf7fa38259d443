#include "daemon/pg/data/pipeline_connections.h"

#include <filesystem>
#include <stdexcept>

#include "daemon/pg/libpq/dsn_resolver.h"
#include "daemon/pg/libpq/source_session.h"

namespace tidemark {

std::unique_ptr<PgConnection> connect_to(const Config& config, const std::string& connection_name) {
  const ConnectionConfig* connection = config.daemon.find_connection(connection_name);
  if (connection == nullptr) throw std::runtime_error("no connection named " + connection_name);
  const std::string base_dir = std::filesystem::path(config.daemon.file).parent_path().string();
  return std::make_unique<PgConnection>(resolve_dsn(*connection, base_dir), connection_name,
                                        KeepaliveTimes::for_lease(config.daemon.fleet.lease));
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

void PipelineConnections::open_data(const Config& config, const PipelineConfig& pipeline, bool with_primary) {
  source = session(pool, config, pipeline.source, SessionKind::Source);
  source_primary.reset();
  const ConnectionConfig* source_config = config.daemon.find_connection(pipeline.source);
  if (with_primary && source_config != nullptr && !source_config->primary.empty()) {
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
  // A source session's zone is its database's: the next run's must be.
  source->mark_session_changed();
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

}  // namespace tidemark
