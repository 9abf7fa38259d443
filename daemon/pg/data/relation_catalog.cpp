#include "daemon/pg/data/relation_catalog.h"

#include <nlohmann/json.hpp>

#include "core/sql/copy_format.h"

#include "daemon/pg/libpq/json_parameter.h"
#include "daemon/pg/libpq/pg_connection.h"

namespace tidemark {

namespace {

// The version of the relation `relation` (an SQL expression of type
// regclass) names, as a query of one row; none when it is not there.
std::string relation_version_sql(const std::string& relation) {
  // Each part a lookup by the relation's oid that an index of its
  // catalog answers; a partitioned table's partitions only for one.
  return "select c.oid::text || '.' || c.xmin::text || '.' || c.relfilenode::text"
    " || '|' || coalesce((select string_agg(a.attnum::text || '.' || a.xmin::text || '.'"
    " || (select t.xmin::text from pg_type t where t.oid = a.atttypid)"
    " || coalesce((select ':' || string_agg(e.oid::text || '.' || e.xmin::text, ',' order by e.oid)"
    " from pg_enum e where e.enumtypid = a.atttypid), ''), ',' order by a.attnum)"
    " from pg_attribute a where a.attrelid = c.oid and a.attnum > 0), '')"
    " || '|' || coalesce((select string_agg(d.oid::text || '.' || d.xmin::text, ',' order by d.oid)"
    " from pg_attrdef d where d.adrelid = c.oid), '')"
    " || '|' || coalesce((select string_agg(i.indexrelid::text || '.' || i.xmin::text || '.'"
    " || (select x.xmin::text from pg_class x where x.oid = i.indexrelid), ',' order by i.indexrelid)"
    " from pg_index i where i.indrelid = c.oid), '')"
    " || '|' || coalesce((select string_agg(g.oid::text || '.' || g.xmin::text, ',' order by g.oid)"
    " from pg_trigger g where g.tgrelid = c.oid), '')"
    " || '|' || coalesce((select string_agg(r.srsubid::text || '.' || r.xmin::text, ',' order by r.srsubid)"
    " from pg_subscription_rel r where r.srrelid = c.oid), '')"
    " || '|' || case when c.relkind = 'p' then coalesce((select string_agg(p.relid::text || ':' || coalesce("
    "(select string_agg(g.oid::text || '.' || g.xmin::text, ',' order by g.oid) from pg_trigger g"
    " where g.tgrelid = p.relid), ''), ',' order by p.relid) from pg_partition_tree(c.oid) p), '') else '' end"
    " from pg_class c where c.oid = " + relation;
}

}  // namespace

std::optional<std::string> relation_version(PgConnection& connection, const QualifiedName& relation) {
  const PgResult r = connection.exec_prepared(relation_version_sql("to_regclass($1)"), {relation.quoted()});
  if (r.rows() != 1 || r.is_null(0, 0)) return std::nullopt;
  return r.text(0, 0);
}

RelationVersions relation_versions(PgConnection& connection, const std::vector<QualifiedName>& relations) {
  std::vector<std::string> names;
  for (const QualifiedName& relation : relations) names.push_back(relation.quoted());
  const PgResult r = connection.exec_prepared(
      "select asked.name, (" + relation_version_sql("to_regclass(asked.name)") +
          ") from jsonb_array_elements_text($1::jsonb) asked(name)",
      {json_parameter(nlohmann::json(names))});
  RelationVersions out;
  for (int row = 0; row < r.rows(); ++row) {
    out[r.text(row, 0)] = r.is_null(row, 1) ? std::nullopt : std::optional<std::string>(r.text(row, 1));
  }
  return out;
}

std::string unique_indexes_sql(const std::string& relation, int server_major) {
  const std::string nulls_not_distinct = server_major >= 15 ? "i.indnullsnotdistinct" : "false";
  // One object per index; its key columns in order, an expression as null.
  return "(select coalesce(json_agg(json_build_object('name', x.relname, 'valid', i.indisvalid,"
         " 'immediate', i.indimmediate, 'nulls_not_distinct', " + nulls_not_distinct +
         ", 'partial', i.indpred is not null, 'primary', i.indisprimary,"
         " 'columns', (select json_agg(a.attname order by k.n)"
         " from unnest(i.indkey::int2[]) with ordinality k(attnum, n)"
         " left join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum and k.attnum > 0"
         " where k.n <= i.indnkeyatts)) order by x.relname), '[]')"
         " from pg_index i join pg_class x on x.oid = i.indexrelid where i.indrelid = " + relation +
         " and i.indisunique)::text";
}

ColumnFill column_fill(const std::string& identity, const std::string& generated) {
  if (!generated.empty()) return ColumnFill::Generated;
  if (identity == "a") return ColumnFill::IdentityAlways;
  if (identity == "d") return ColumnFill::IdentityByDefault;
  return ColumnFill::None;
}

std::vector<UniqueIndex> parse_unique_indexes(const std::string& json) {
  std::vector<UniqueIndex> out;
  try {
    for (const auto& entry : nlohmann::json::parse(json)) {
      UniqueIndex u;
      u.name = entry.at("name").get<std::string>();
      u.valid = entry.at("valid").get<bool>();
      u.immediate = entry.at("immediate").get<bool>();
      u.nulls_not_distinct = entry.at("nulls_not_distinct").get<bool>();
      u.partial = entry.at("partial").get<bool>();
      u.primary = entry.at("primary").get<bool>();
      for (const auto& column : entry.at("columns")) {
        if (column.is_null()) {
          u.expressions = true;
        } else {
          u.columns.push_back(column.get<std::string>());
        }
      }
      out.push_back(std::move(u));
    }
  } catch (const nlohmann::json::exception& e) {
    throw PgError(ErrorKind::Transient, std::string("unexpected unique index list: ") + e.what());
  }
  return out;
}

std::string validated_not_null_sql(const std::string& attribute) {
  const std::string& a = attribute;
  return "(" + a + ".attnotnull and not exists (select from pg_constraint k where k.conrelid = " + a +
         ".attrelid and k.contype = 'n' and not k.convalidated and " + a + ".attnum = any(k.conkey)))";
}

std::string nondeterministic_collation_sql(const std::string& attribute) {
  return "coalesce((select quote_ident(co.collname) from pg_collation co where co.oid = " + attribute +
         ".attcollation and not co.collisdeterministic), '')";
}

std::string enum_labels_sql(const std::string& attribute) {
  return "(select json_build_array(quote_ident(n.nspname) || '.' || quote_ident(t.typname),"
         " (select json_agg(e.enumlabel order by e.enumsortorder) from pg_enum e where e.enumtypid = t.oid))::text"
         " from pg_type t join pg_namespace n on n.oid = t.typnamespace where t.oid = " + attribute +
         ".atttypid and t.typtype = 'e')";
}

void parse_enum_labels(const std::string& json, ColumnShape& column) {
  try {
    const nlohmann::json parsed = nlohmann::json::parse(json);
    column.enum_type = parsed.at(0).get<std::string>();
    column.enum_labels.clear();
    if (!parsed.at(1).is_null()) column.enum_labels = parsed.at(1).get<std::vector<std::string>>();
  } catch (const nlohmann::json::exception& e) {
    throw PgError(ErrorKind::Transient, std::string("unexpected enum labels: ") + e.what());
  }
}

std::string row_changing_triggers_sql(const std::string& relation) {
  // tgtype bits: 1 row, 2 before, 4 insert, 16 update. 'O' fires in the
  // usual (origin) sessions, 'A' always; 'R' and 'D' do not for ours. A
  // partitioned table's rows land in its partitions, whose own triggers
  // fire as well; a partition's copy of the parent's trigger (same name)
  // is the parent's, disabled with it.
  return "(select coalesce(json_agg(json_build_array(n.nspname, c.relname, t.tgname)"
         " order by c.oid <> " + relation + ", n.nspname, c.relname, t.tgname), '[]')"
         " from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace"
         " where (t.tgrelid = " + relation + " or t.tgrelid in (select relid from pg_partition_tree(" + relation +
         ")))"
         " and not t.tgisinternal and t.tgenabled in ('O', 'A') and t.tgtype & 3 = 3 and t.tgtype & 20 <> 0"
         " and (t.tgrelid = " + relation + " or not exists (select from pg_trigger p where p.tgrelid = " + relation +
         " and p.tgname = t.tgname)))::text";
}

std::vector<RowTrigger> parse_row_triggers(const std::string& json) {
  try {
    std::vector<RowTrigger> out;
    for (const auto& entry : nlohmann::json::parse(json)) {
      out.push_back(RowTrigger{QualifiedName(entry.at(0).get<std::string>(), entry.at(1).get<std::string>()),
                               entry.at(2).get<std::string>()});
    }
    return out;
  } catch (const nlohmann::json::exception& e) {
    throw PgError(ErrorKind::Transient, std::string("unexpected trigger list: ") + e.what());
  }
}

TargetTable read_target_table(PgConnection& target, const QualifiedName& table) {
  // One round trip: each column a row, with the table's unique indexes
  // and row-changing triggers beside it.
  const PgResult r = target.exec_prepared(
      "select a.attname, format_type(a.atttypid, a.atttypmod), " + std::string(kPortableBinarySql) +
          ", a.attnotnull, a.attidentity::text, a.attgenerated::text, " +
          unique_indexes_sql("to_regclass($1)", target.server_major_version()) + ", " +
          row_changing_triggers_sql("to_regclass($1)") + ", " + nondeterministic_collation_sql("a") + ", " +
          enum_labels_sql("a") +
          " from pg_attribute a left join pg_type t on t.oid = a.atttypid"
          " where a.attrelid = to_regclass($1) and a.attnum > 0 and not a.attisdropped order by a.attnum",
      {table.quoted()});
  TargetTable out;
  for (int i = 0; i < r.rows(); ++i) {
    ColumnShape c{r.text(i, 0), r.text(i, 1), r.boolean(i, 2)};
    c.not_null = r.boolean(i, 3);
    c.fill = column_fill(r.text(i, 4), r.text(i, 5));
    c.nondeterministic_collation = r.text(i, 8);
    if (!r.is_null(i, 9)) parse_enum_labels(r.text(i, 9), c);
    out.columns.push_back(c);
  }
  if (r.rows() > 0) {
    out.unique_indexes = parse_unique_indexes(r.text(0, 6));
    out.row_changing_triggers = parse_row_triggers(r.text(0, 7));
  }
  return out;
}

}  // namespace tidemark
