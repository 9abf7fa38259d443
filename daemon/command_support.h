// What the database commands share: loading the configuration (errors
// printed, exit code 2) and opening the state database.
#pragma once

#include <iosfwd>
#include <memory>

#include "core/config_model.h"
#include "daemon/pg_connection.h"

namespace tidemark {

// Loads and validates the configuration; on errors prints them to `err`
// and returns nullptr (the caller exits 2).
std::shared_ptr<const Config> load_config_or_report(const std::string& path, std::ostream& err);

// Opens a named connection. Throws std::runtime_error or PgError.
std::unique_ptr<PgConnection> connect_to(const Config& config, const std::string& connection_name);

// True when the tidemark schema exists: read-only commands report an
// empty state instead of creating it.
bool state_schema_exists(PgConnection& state);

}  // namespace tidemark
