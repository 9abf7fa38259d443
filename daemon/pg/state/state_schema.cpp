#include "daemon/pg/state/state_schema.h"

#include "core/sql/state_migrations.h"
#include "daemon/pg/libpq/pg_error.h"

namespace tidemark {

std::vector<int> migrate_state_schema(PgConnection& state) {
  std::vector<int> applied;
  state.exec("BEGIN");
  try {
    state.exec("select pg_advisory_xact_lock($1::bigint)", {std::to_string(kMigrationLockKey)});
    // An administrator may have made the schema for a role without
    // CREATE on the database, which `create schema if not exists` needs
    // even when the schema is there.
    if (state.exec("select to_regnamespace('tidemark') is null").boolean(0, 0)) {
      try {
        state.exec("create schema tidemark");
      } catch (const PgError& e) {
        throw PgError(e.kind(), std::string(e.what()) +
                                    " (the state's role may not create schemas here: have an administrator run"
                                    " `create schema tidemark authorization <that role>`, then migrate again;"
                                    " docs/operations.md, \"Roles and grants\")");
      }
    }
    state.exec(
        "create table if not exists tidemark.schema_migrations ("
        "  version int primary key, description text not null,"
        "  applied_at timestamptz not null default now())");
    const int current = static_cast<int>(
        state.exec("select coalesce(max(version), 0) from tidemark.schema_migrations").integer(0, 0));
    for (const StateMigration& m : state_migrations()) {
      if (m.version <= current) continue;
      state.exec(m.sql);
      state.exec("insert into tidemark.schema_migrations (version, description) values ($1, $2)",
                 {std::to_string(m.version), std::string(m.description)});
      applied.push_back(m.version);
    }
    state.exec("COMMIT");
  } catch (...) {
    state.rollback_quietly();
    throw;
  }
  return applied;
}

int state_schema_version(PgConnection& state) {
  // Two statements: a statement naming a table that is not there fails
  // as it is parsed, whatever it would have asked first.
  if (!state.exec("select to_regclass('tidemark.schema_migrations') is not null").boolean(0, 0)) return 0;
  return static_cast<int>(
      state.exec("select coalesce(max(version), 0) from tidemark.schema_migrations").integer(0, 0));
}

}  // namespace tidemark
