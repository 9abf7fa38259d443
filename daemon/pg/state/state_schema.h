// Creates or upgrades the `tidemark` state schema on the state database.
// Safe to run twice and from several processes at once (a transaction-level
// advisory lock serialises them). Throws PgError.
#pragma once

#include <vector>

#include "daemon/pg/libpq/pg_connection.h"

namespace tidemark {

// Applies every migration newer than the schema's version; returns the
// versions applied (empty when up to date).
std::vector<int> migrate_state_schema(PgConnection& state);

// The version the schema is at; 0 when there is none. Throws PgError.
int state_schema_version(PgConnection& state);

}  // namespace tidemark
