// The watch on changes a cursor cannot see: which tables are watched and
// how a run's reading of the source's statistics adds up. An identity or
// sequence cursor sees inserts only; the source's statistics still count
// every update and delete (pg_stat_all_tables), without reading the table.
// Pure functions over values; thread-safe.
#pragma once

#include <cstdint>
#include <optional>

#include "core/config/config_model.h"
#include "core/run/run_ports.h"

namespace tidemark {

// Whether `table`'s runs watch for changes their cursor cannot see: an
// incremental table whose cursor an identity or a sequence fills, and no
// scheduled reconcile (deletes.reconcile), which would copy the changed
// rows again and delete the gone ones by itself.
bool watches_changes(const TableConfig& table, const SourceTable& source);

// The count after a run that read `counted` (updates and deletes since the
// statistics were last reset) where the table's previous watched run left
// `previous`: what grew since is unseen, added to what was unseen before.
// No previous count: nothing is unseen yet (the first run reads every row
// there is). A count below the previous one means the statistics were
// reset (pg_stat_reset, a crash, a failover): what they count since is
// unseen, at least.
ChangeCount next_change_count(const std::optional<ChangeCount>& previous, std::int64_t counted);

}  // namespace tidemark
