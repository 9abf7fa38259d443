// Reads what `tidemark discover` decides from (core/discover/source_catalog.h)
// out of a source database's catalog: its tables (not partitions, not
// extensions' tables, not system or tidemark schemas) with their columns,
// unique indexes and row triggers, in one statement. Reads only. Used on
// the calling thread with a session that it does not own.
#pragma once

#include <string>
#include <vector>

#include "core/discover/source_catalog.h"
#include "daemon/pg/libpq/pg_connection.h"

namespace tidemark {

// The tables of `schemas` (every schema but the system ones and tidemark's
// when empty), ordered by schema and name. Throws PgError.
std::vector<CatalogTable> read_source_catalog(PgConnection& connection, const std::vector<std::string>& schemas);

}  // namespace tidemark
