#include "daemon/pg/target_definition.h"

#include <nlohmann/json.hpp>

#include "daemon/pg/json_parameter.h"

namespace tidemark {
namespace {

// Every type a column needs, with what it needs in turn (an array's
// element, a domain's base type, a composite's attributes), deepest
// first. A domain keeps its validated CHECK constraints (a NOT VALID one
// never held for the source's rows); a table's row type is not made (it
// comes with its table). With search_path at pg_catalog, format_type() and
// pg_get_constraintdef() qualify every name outside it.
constexpr const char* kDefinitionSql = R"SQL(
with recursive loaded as (
  select a.attname, a.atttypid, format_type(a.atttypid, a.atttypmod) as type, a.attnotnull, a.attnum
  from pg_attribute a
  where a.attrelid = $1::regclass and a.attnum > 0 and not a.attisdropped
    and a.attname in (select json_array_elements_text($2::json))
),
needs(oid, depth, used_by) as (
  select atttypid, 0, attname from loaded
  union all
  select x.child, n.depth + 1, n.used_by
  from needs n join pg_type t on t.oid = n.oid
  cross join lateral (
    select t.typelem as child where t.typelem <> 0 and t.typlen = -1
    union all select t.typbasetype where t.typtype = 'd'
    union all select a.atttypid from pg_attribute a
      where t.typtype = 'c' and a.attrelid = t.typrelid and a.attnum > 0 and not a.attisdropped
  ) x
  where n.depth < 32
),
wanted as (
  select n.oid, max(n.depth) as depth, min(n.used_by) as used_by
  from needs n join pg_type t on t.oid = n.oid join pg_namespace s on s.oid = t.typnamespace
  where s.nspname not in ('pg_catalog', 'information_schema')
    -- an array type comes with its element type
    and not (t.typelem <> 0 and t.typlen = -1)
  group by n.oid
)
select
  (select coalesce(json_agg(json_build_array(attname, type, attnotnull) order by attnum), '[]') from loaded)::text,
  (select coalesce(json_agg(json_build_array(
      quote_ident(s.nspname) || '.' || quote_ident(t.typname), s.nspname, t.typname,
      case t.typtype
        when 'e' then 'CREATE TYPE ' || quote_ident(s.nspname) || '.' || quote_ident(t.typname) || ' AS ENUM (' ||
          coalesce((select string_agg(quote_literal(e.enumlabel), ', ' order by e.enumsortorder)
                    from pg_enum e where e.enumtypid = t.oid), '') || ')'
        when 'd' then 'CREATE DOMAIN ' || quote_ident(s.nspname) || '.' || quote_ident(t.typname) || ' AS ' ||
          format_type(t.typbasetype, t.typtypmod) ||
          case when t.typnotnull then ' NOT NULL' else '' end ||
          coalesce((select ' ' || string_agg(pg_get_constraintdef(c.oid), ' ' order by c.conname)
                    from pg_constraint c where c.contypid = t.oid and c.contype = 'c' and c.convalidated), '')
        when 'c' then case when (select relkind from pg_class where oid = t.typrelid) <> 'c' then '' else 'CREATE TYPE ' || quote_ident(s.nspname) || '.' || quote_ident(t.typname) || ' AS (' ||
          (select string_agg(quote_ident(a.attname) || ' ' || format_type(a.atttypid, a.atttypmod), ', '
                             order by a.attnum)
           from pg_attribute a where a.attrelid = t.typrelid and a.attnum > 0 and not a.attisdropped) || ')' end
        else '' end,
      coalesce((select x.extname from pg_depend d join pg_extension x on x.oid = d.refobjid
                where d.classid = 'pg_type'::regclass and d.objid = t.oid
                  and d.refclassid = 'pg_extension'::regclass and d.deptype = 'e' limit 1), ''),
      w.used_by)
    order by w.depth desc, s.nspname, t.typname), '[]')
   from wanted w join pg_type t on t.oid = w.oid join pg_namespace s on s.oid = t.typnamespace)::text
)SQL";

}  // namespace

std::vector<DefinedType> missing_types(PgConnection& target, const TableDefinition& definition) {
  std::vector<DefinedType> out;
  if (definition.types.empty()) return out;
  // One round trip: which of the names the target does not resolve.
  nlohmann::json names = nlohmann::json::array();
  for (const DefinedType& type : definition.types) names.push_back(type.name);
  const PgResult r =
      target.exec("select to_regtype(n) is null from json_array_elements_text($1::json) with ordinality t(n, i) "
                  "order by i",
                  {json_parameter(names)});
  for (int i = 0; i < r.rows(); ++i) {
    if (r.boolean(i, 0)) out.push_back(definition.types[static_cast<std::size_t>(i)]);
  }
  return out;
}

std::optional<std::string> creation_refusal(const std::vector<DefinedType>& missing, const QualifiedName& table) {
  for (const DefinedType& type : missing) {
    if (!type.create.empty()) continue;
    return "cannot create target table " + table.display() + ": column " + display_identifier(type.used_by) +
           " needs type " + type.name + ", which the target database lacks" +
           (type.extension.empty() ? " and tidemark cannot create (it makes enums, domains and composite types): "
                                     "create it there first"
                                   : ": run CREATE EXTENSION " + quote_identifier(type.extension) + " there first");
  }
  return std::nullopt;
}

TableDefinition read_table_definition(PgConnection& source, const QualifiedName& table,
                                      const std::vector<std::string>& columns) {
  TableDefinition out;
  source.exec("BEGIN READ ONLY; SET LOCAL search_path = pg_catalog");
  try {
    const PgResult r = source.exec(kDefinitionSql, {table.quoted(), json_parameter(nlohmann::json(columns))});
    source.exec("COMMIT");
    for (const auto& c : nlohmann::json::parse(r.text(0, 0))) {
      out.columns.push_back(DefinedColumn{c.at(0).get<std::string>(), c.at(1).get<std::string>(), c.at(2).get<bool>()});
    }
    for (const auto& t : nlohmann::json::parse(r.text(0, 1))) {
      out.types.push_back(DefinedType{t.at(0).get<std::string>(), t.at(1).get<std::string>(),
                                      t.at(2).get<std::string>(), t.at(3).get<std::string>(),
                                      t.at(4).get<std::string>(), t.at(5).get<std::string>()});
    }
  } catch (const nlohmann::json::exception& e) {
    source.rollback_quietly();
    throw PgError(ErrorKind::Transient, std::string("unexpected type definitions: ") + e.what());
  } catch (...) {
    source.rollback_quietly();
    throw;
  }
  return out;
}

}  // namespace tidemark
