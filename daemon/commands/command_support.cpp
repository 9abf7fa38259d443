#include "daemon/commands/command_support.h"

#include <pwd.h>
#include <unistd.h>

#include <filesystem>
#include <ostream>

#include "daemon/commands/exit_code.h"
#include "daemon/config_loader.h"
#include "daemon/pg/data/pipeline_connections.h"
#include "daemon/pg/libpq/dsn_resolver.h"
#include "daemon/pg/libpq/session_probe.h"
#include "daemon/pg/state/pause_book.h"
#include "daemon/pg/state/state_reader.h"
#include "daemon/pg/state/state_schema.h"

namespace tidemark {

std::shared_ptr<const Config> load_config_or_report(const std::string& path, std::ostream& err) {
  auto loaded = load_config(path);
  if (!loaded.value) {
    for (const ConfigError& e : loaded.errors) err << e.to_string() << '\n';
    return nullptr;
  }
  return std::make_shared<const Config>(std::move(*loaded.value));
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

std::string operating_system_user() {
  if (const passwd* pw = ::getpwuid(::geteuid())) return pw->pw_name;
  return "uid " + std::to_string(::geteuid());
}

PauseSet read_pauses(PgConnection& state) {
  auto reading = PauseBook(state).read(std::nullopt);
  if (!reading) throw std::runtime_error(reading.error());
  return std::move(reading).value().pauses;
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
