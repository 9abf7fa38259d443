// The versions of the `tidemark` state schema (SPEC §5), oldest first.
// Each migration runs once, in its own transaction, under a lock, so two
// processes migrating at once are safe. Append new versions; never edit
// a released one.
#pragma once

#include <vector>

namespace tidemark {

struct StateMigration {
  int version;
  const char* description;
  const char* sql;
};

const std::vector<StateMigration>& state_migrations();

// The pg_advisory_xact_lock key that serialises migrations.
inline constexpr long long kMigrationLockKey = 0x7469646d61726b01LL;  // "tidmark\x01"

}  // namespace tidemark
