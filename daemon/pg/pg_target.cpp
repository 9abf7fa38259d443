#include "daemon/pg/pg_target.h"

#include "daemon/pg/pg_unit_of_work.h"
#include "daemon/pg/relation_catalog.h"

namespace tidemark {

Result<TargetTable> PgTarget::check(const TableConfig& table) {
  auto found = find_table(table);
  copy_types_ = found && found->exists ? TargetCopyTypes{found->columns, target_.server_major_version() ==
                                                                             source_.connection().server_major_version()}
                                       : TargetCopyTypes{};
  return found;
}

Result<TargetTable> PgTarget::find_table(const TableConfig& table) {
  if (catalog_ == nullptr) return read_table(table);
  return catalog_->target(target_, table.target_table, [&] { return read_table(table); },
                          versions_ ? &*versions_ : nullptr);
}

void PgTarget::about_to_check(const std::vector<const TableConfig*>& tables) {
  std::vector<QualifiedName> relations;
  for (const TableConfig* t : tables) relations.push_back(t->target_table);
  try {
    versions_ = relation_versions(target_, relations);
  } catch (const PgError&) {
    versions_.reset();  // each check() asks on its own, and fails there if it must
  }
}

Result<TargetTable> PgTarget::read_table(const TableConfig& table) {
  return as_result([&]() -> Result<TargetTable> {
    const std::string name = table.target_table.display();
    // One round trip: each column a row, with the table's unique indexes
    // and row-changing triggers beside it.
    const PgResult r = target_.exec_prepared(
        "select a.attname, format_type(a.atttypid, a.atttypmod), " + std::string(kPortableBinarySql) +
            ", a.attnotnull, a.attidentity::text, a.attgenerated::text, " +
            unique_indexes_sql("to_regclass($1)", target_.server_major_version()) + ", " +
            row_changing_triggers_sql("to_regclass($1)") +
            " from pg_attribute a left join pg_type t on t.oid = a.atttypid"
            " where a.attrelid = to_regclass($1) and a.attnum > 0 and not a.attisdropped order by a.attnum",
        {table.target_table.quoted()});
    TargetTable out;
    for (int i = 0; i < r.rows(); ++i) {
      ColumnShape c{r.text(i, 0), r.text(i, 1), r.boolean(i, 2)};
      c.not_null = r.boolean(i, 3);
      c.fill = column_fill(r.text(i, 4), r.text(i, 5));
      out.columns.push_back(c);
    }
    if (r.rows() > 0) {
      out.unique_indexes = parse_unique_indexes(r.text(0, 6));
      out.row_changing_triggers = parse_row_triggers(r.text(0, 7));
    }
    if (out.columns.empty()) {
      if (table.create_target) {
        TargetTable missing;
        missing.exists = false;
        return missing;
      }
      return permanent_error("target table " + name +
                             " does not exist (create it before loading, or set create_target: true)");
    }
    return out;
  });
}

std::unique_ptr<UnitOfWork> PgTarget::begin(const RunLock& lock) {
  return std::make_unique<PgUnitOfWork>(target_, source_, state_, lock, cancel_, fault_hook_, copy_types_);
}

}  // namespace tidemark
