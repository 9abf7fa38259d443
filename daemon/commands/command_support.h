// What the database commands share: loading the configuration (errors
// printed, exit code 2) and preparing the state database (its session
// kept, its schema current). The sessions themselves come from
// daemon/pg/data/pipeline_connections.
#pragma once

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

#include "core/config/config_model.h"
#include "core/schedule/pause_set.h"
#include "daemon/pg/data/pipeline_connections.h"
#include "daemon/pg/libpq/pg_connection.h"

namespace tidemark {

// Loads and validates the configuration; on errors prints them to `err`
// and returns nullptr (the caller exits 2).
std::shared_ptr<const Config> load_config_or_report(const std::string& path, std::ostream& err);

// The state connection must keep one server session between its
// transactions: each table's advisory lock lives on it for a whole run.
// Returns the refusal (PgBouncer in transaction or statement mode, see
// session_probe.h) for the caller to print before exiting 2; nothing when
// the session is kept, or when the probe could not tell (the database is
// down: the runs themselves will say so).
std::optional<std::string> state_session_refusal(const Config& config);

// What every command that writes the state does first: refuses a state
// session a pooler does not keep (state_session_refusal; exit 2) and, with
// `migrate`, brings the state schema up to date (exit 1 when it cannot).
// Nothing when the command may go on; else its exit code, after telling
// `err` why ("tidemark COMMAND: ...").
std::optional<int> prepare_state(const Config& config, const std::string& command, std::ostream& err,
                                 bool migrate = true);

// Who runs the command, as the audit records it: the operating system
// user (the database role is the daemon's, shared by every operator).
std::string operating_system_user();

// The pauses in the state database (daemon/pg/state/pause_book.h); none
// when its schema predates them. Throws std::runtime_error on failure.
PauseSet read_pauses(PgConnection& state);

// True when the tidemark schema exists: read-only commands report an
// empty state instead of creating it. Throws std::runtime_error when the
// state database cannot say.
bool state_schema_exists(PgConnection& state);

// state_schema_exists, telling `err` when there is no state yet.
bool state_schema_exists_or_say(PgConnection& state, const Config& config, std::ostream& err);

}  // namespace tidemark
