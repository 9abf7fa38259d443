#include "core/run/change_watch.h"

#include "core/config/table_modes.h"

namespace tidemark {

bool watches_changes(const TableConfig& table, const SourceTable& source) {
  const bool reconciled = table.deletes.has_value();  // its reconcile schedule is required
  const TableModeSpec& mode = table_mode(table.mode);
  return mode.reads_past_cursor && (source.cursor_insert_only || mode.inserts_only) && !reconciled;
}

ChangeCount next_change_count(const std::optional<ChangeCount>& previous, std::int64_t counted) {
  if (!previous) return ChangeCount{counted, 0};
  const std::int64_t grown = counted >= previous->counted ? counted - previous->counted : counted;
  return ChangeCount{counted, previous->unseen + grown};
}

}  // namespace tidemark
