#include "daemon/pg/data/pg_target.h"

#include <cstdlib>

#include "core/sql/copy_format.h"
#include "core/sql/verify_statements.h"
#include "core/text/sql_identifier.h"
#include "daemon/pg/data/partition_bounds.h"
#include "daemon/pg/data/pg_unit_of_work.h"
#include "daemon/pg/data/relation_catalog.h"
#include "daemon/pg/state/run_lock_halves.h"

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
    TargetTable out = read_target_table(target_, table.target_table);
    if (out.columns.empty()) {
      if (table.create_target) {
        TargetTable missing;
        missing.exists = false;
        return missing;
      }
      return permanent_error("target table " + table.target_table.display() +
                             " does not exist (create it before loading, or set create_target: true)");
    }
    return out;
  });
}

std::unique_ptr<UnitOfWork> PgTarget::begin(const RunLock& lock) {
  if (steps_ == nullptr) std::abort();  // a target for checks only
  return std::make_unique<PgUnitOfWork>(target_, source_, *steps_, lock, cancel_, fault_hook_, copy_types_,
                                        &copy_types_, helper_);
}

Status PgTarget::await_range_helpers(const RunLock& lock) {
  return as_result([&] {
    target_.exec("SELECT pg_advisory_xact_lock(" + RunLockHalves(run_lock_key(lock)).int4_pair() + ")", cancel_);
  });
}

Result<bool> PgTarget::holds_rows(const TableConfig& table) {
  return as_result([&] {
    return target_.exec("SELECT EXISTS (SELECT FROM " + table.target_table.quoted() + ")").boolean(0, 0);
  });
}

Result<PartitionComparison> PgTarget::compare_partition(const TableConfig& table, const PartitionRequest& request) {
  PgConnection& source = source_.connection();
  auto compared = as_result([&]() -> Result<PartitionComparison> {
    if (!partition_check_ || partition_check_->table != table.target_table.quoted()) {
      // What every partition of the run is checked with, read once: the
      // partition column's type, and the query's columns, each as the
      // target stores it.
      const PgResult columns = target_.exec(
          "select a.attname, format_type(a.atttypid, a.atttypmod), " + std::string(kPortableBinarySql) +
              " from pg_attribute a left join pg_type t on t.oid = a.atttypid"
              " where a.attrelid = to_regclass($1) and a.attnum > 0 and not a.attisdropped",
          {table.target_table.quoted()});
      std::vector<ColumnShape> in_target;
      for (int i = 0; i < columns.rows(); ++i) {
        in_target.push_back(ColumnShape{columns.text(i, 0), columns.text(i, 1), columns.boolean(i, 2)});
      }
      const ColumnShape* partition_column = find_column(in_target, table.partition->column);
      if (partition_column == nullptr) {
        return permanent_error("target table " + table.target_table.display() + " does not exist or has no column " +
                               table.partition->column);
      }
      const auto bounds = partition_bounds_for(partition_column->type, table, request);
      if (!bounds) return bounds.failure();
      const PgResult shape = source.exec(
          "SELECT * FROM (\n" + without_trailing_semicolons(table.query) + "\n) q LIMIT 0", bounds->params,
          bounds->types);
      std::vector<PartitionColumn> compared_columns;
      for (int c = 0; c < shape.columns(); ++c) {
        const ColumnShape* stored = find_column(in_target, shape.column_name(c));
        // A type of the target's own (an enum, say) may not exist on the
        // source: its text is compared as the source prints it.
        compared_columns.push_back(
            {shape.column_name(c), stored != nullptr && stored->portable_binary ? stored->type : ""});
      }
      partition_check_ = PartitionCheck{table.target_table.quoted(), partition_column->type,
                                        partition_verify_queries(table, compared_columns, bounds->cast)};
    }
    const auto bounds = partition_bounds_for(partition_check_->column_type, table, request);
    if (!bounds) return bounds.failure();
    const PartitionVerifyQueries& queries = partition_check_->queries;
    // Both sides at once: the source's query is most of the time.
    source.send(queries.source, bounds->params, bounds->types);
    const PgResult in_target = target_.exec(queries.target, bounds->params);
    const PgResult in_source = source.finish(&cancel_);
    return PartitionComparison{in_source.integer(0, 0), in_target.integer(0, 0),
                               in_source.text(0, 1) == in_target.text(0, 1)};
  });
  // A statement sent and not finished would hold the source session.
  if (!compared) source.rollback_quietly();
  return compared;
}

}  // namespace tidemark
