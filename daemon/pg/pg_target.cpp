#include "daemon/pg/pg_target.h"

#include <algorithm>
#include <map>
#include <set>

#include "daemon/pg/pg_unit_of_work.h"

namespace tidemark {

Result<std::vector<ColumnShape>> PgTarget::check(const TableConfig& table) {
  try {
    const std::string name = table.target_table.display();
    // One round trip: the columns ('c', with their types) and the columns
    // of every plain unique index ('i', with the index).
    const PgResult r = target_.exec(
        "select 'c', a.attname, format_type(a.atttypid, a.atttypmod), " + std::string(kPortableBinarySql) +
            " from pg_attribute a left join pg_type t on t.oid = a.atttypid"
            " where a.attrelid = to_regclass($1) and a.attnum > 0 and not a.attisdropped"
            " union all"
            " select 'i', a.attname, i.indexrelid::text, false from pg_index i"
            " join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)"
            " where i.indrelid = to_regclass($1) and i.indisunique and i.indpred is null and i.indexprs is null",
        {table.target_table.quoted()});
    std::vector<ColumnShape> columns;
    for (int i = 0; i < r.rows(); ++i) {
      if (r.text(i, 0) == "c") columns.push_back(ColumnShape{r.text(i, 1), r.text(i, 2), r.boolean(i, 3)});
    }
    if (columns.empty()) return permanent_error("target table " + name + " does not exist (create it before loading)");
    std::map<std::string, std::set<std::string>> unique_columns;
    for (int i = 0; i < r.rows(); ++i) {
      if (r.text(i, 0) == "i") unique_columns[r.text(i, 2)].insert(r.text(i, 1));
    }
    const std::set<std::string> key(table.key.begin(), table.key.end());
    const bool has_key = std::any_of(unique_columns.begin(), unique_columns.end(),
                                     [&](const auto& entry) { return entry.second == key; });
    if (!has_key) {
      std::string list;
      for (const auto& k : table.key) list += (list.empty() ? "" : ", ") + k;
      return permanent_error("target table " + name + " has no unique index or primary key on exactly (" + list + ")");
    }
    copy_types_ = TargetCopyTypes{columns,
                                  target_.server_major_version() == source_.connection().server_major_version()};
    return columns;
  } catch (const PgError& e) {
    return e.as_error();
  }
}

std::unique_ptr<UnitOfWork> PgTarget::begin(const RunLock& lock) {
  return std::make_unique<PgUnitOfWork>(target_, source_, state_, lock, cancel_, fault_hook_, copy_types_);
}

}  // namespace tidemark
