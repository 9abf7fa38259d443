// The settings of tidemark's own source sessions: read only, named, row
// security off. Every session tidemark opens on a source (the pool's, a
// command's) takes them at once. Free functions; thread-safe.
#pragma once

#include <string>

#include "daemon/pg/libpq/pg_connection.h"

namespace tidemark {

// The application_name of tidemark's own source sessions. They are read
// only, so they never hold a transaction id and cannot write a row: the
// safe horizon ignores them (a session with this name that does hold a
// transaction id still counts).
constexpr const char* kReadOnlySourceApplication = "tidemark (read-only source)";

// The settings that make a source session read-only (every transaction on
// it, so no partition query can change the source either), name it
// kReadOnlySourceApplication, and turn row-level security off: a role that
// a policy filters then fails to read the table, where it would read some
// of its rows and the watermark claim the rest.
std::string read_only_source_settings();
// Applies them to a freshly opened source session. Throws PgError.
void make_read_only_source(PgConnection& connection);

}  // namespace tidemark
