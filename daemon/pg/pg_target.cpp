#include "daemon/pg/pg_target.h"

#include "daemon/pg/pg_unit_of_work.h"

namespace tidemark {

namespace {

ColumnFill column_fill(const std::string& identity, const std::string& generated) {
  if (!generated.empty()) return ColumnFill::Generated;
  if (identity == "a") return ColumnFill::IdentityAlways;
  if (identity == "d") return ColumnFill::IdentityByDefault;
  return ColumnFill::None;
}

}  // namespace

Result<TargetTable> PgTarget::check(const TableConfig& table) {
  try {
    const std::string name = table.target_table.display();
    // One round trip: the columns ('c') and, one row per key column, the
    // unique indexes ('i'). NULLS NOT DISTINCT came with PostgreSQL 15.
    const std::string nulls_not_distinct =
        target_.server_major_version() >= 15 ? "i.indnullsnotdistinct" : "false";
    const PgResult r = target_.exec(
        "select 'c', a.attname, format_type(a.atttypid, a.atttypmod), " + std::string(kPortableBinarySql) +
            ", a.attnotnull, a.attidentity::text, a.attgenerated::text, a.attnum::int, '', false, false, false, false"
            " from pg_attribute a left join pg_type t on t.oid = a.atttypid"
            " where a.attrelid = to_regclass($1) and a.attnum > 0 and not a.attisdropped"
            " union all"
            " select 'i', a.attname, '', false, false, '', '', k.n::int, x.relname::text, i.indisvalid, i.indimmediate, " +
            nulls_not_distinct +
            ", i.indpred is not null"
            " from pg_index i join pg_class x on x.oid = i.indexrelid"
            " cross join lateral unnest(i.indkey::int2[]) with ordinality k(attnum, n)"
            " left join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum"
            " where i.indrelid = to_regclass($1) and i.indisunique and k.n <= i.indnkeyatts"
            " order by 1, 9, 8",
        {table.target_table.quoted()});
    TargetTable out;
    for (int i = 0; i < r.rows(); ++i) {
      if (r.text(i, 0) == "c") {
        ColumnShape c{r.text(i, 1), r.text(i, 2), r.boolean(i, 3)};
        c.not_null = r.boolean(i, 4);
        c.fill = column_fill(r.text(i, 5), r.text(i, 6));
        out.columns.push_back(c);
        continue;
      }
      // An index's key columns come in order, one row each; an expression
      // has no column.
      const std::string index = r.text(i, 8);
      if (out.unique_indexes.empty() || out.unique_indexes.back().name != index) {
        UniqueIndex u;
        u.name = index;
        u.valid = r.boolean(i, 9);
        u.immediate = r.boolean(i, 10);
        u.nulls_not_distinct = r.boolean(i, 11);
        u.partial = r.boolean(i, 12);
        out.unique_indexes.push_back(u);
      }
      UniqueIndex& u = out.unique_indexes.back();
      if (r.is_null(i, 1)) {
        u.expressions = true;
      } else {
        u.columns.push_back(r.text(i, 1));
      }
    }
    if (out.columns.empty()) return permanent_error("target table " + name + " does not exist (create it before loading)");
    copy_types_ = TargetCopyTypes{out.columns,
                                  target_.server_major_version() == source_.connection().server_major_version()};
    return out;
  } catch (const PgError& e) {
    return e.as_error();
  }
}

std::unique_ptr<UnitOfWork> PgTarget::begin(const RunLock& lock) {
  return std::make_unique<PgUnitOfWork>(target_, source_, state_, lock, cancel_, fault_hook_, copy_types_);
}

}  // namespace tidemark
