#include "daemon/pg/data/target_definition.h"

#include <nlohmann/json.hpp>

#include "daemon/pg/data/relation_catalog.h"
#include "daemon/pg/libpq/json_parameter.h"

namespace tidemark {
namespace {

// Every type a column needs, with what it needs in turn (an array's
// element, a domain's base type, a composite's attributes), deepest
// first. A domain keeps its validated CHECK constraints (a NOT VALID one
// never held for the source's rows); a table's row type is not made (it
// comes with its table). With search_path at pg_catalog, format_type() and
// pg_get_constraintdef() qualify every name outside it. A type tidemark
// makes goes into the target table's schema ($3; the source's own schema
// when the target table names none), so two sources' types of one name
// stay apart in one warehouse; an extension's type keeps its name, as the
// target's extension has it, written by format_type() with its modifier
// (vector(1536), geometry(Point,4326)).
constexpr const char* kDefinitionTemplate = R"SQL(
with recursive columns as (
  select a.attname, a.atttypid, a.atttypmod, %NOT_NULL% as attnotnull, a.attnum
  from pg_attribute a
  where a.attrelid = $1::oid and a.attnum > 0 and not a.attisdropped
    and a.attname in (select json_array_elements_text($2::json))
),
needs(oid, depth, used_by) as (
  select atttypid, 0, attname from columns
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
  select n.oid, max(n.depth) as depth, min(n.used_by) as used_by,
    coalesce((select x.extname from pg_depend d join pg_extension x on x.oid = d.refobjid
              where d.classid = 'pg_type'::regclass and d.objid = n.oid
                and d.refclassid = 'pg_extension'::regclass and d.deptype = 'e' limit 1), '') as extension
  from needs n join pg_type t on t.oid = n.oid join pg_namespace s on s.oid = t.typnamespace
  where s.nspname not in ('pg_catalog', 'information_schema')
    -- an array type comes with its element type
    and not (t.typelem <> 0 and t.typlen = -1)
  group by n.oid
),
placed as (
  select w.*, t.typname, t.typtype, t.typarray, t.typbasetype, t.typtypmod, t.typnotnull, t.typrelid,
    case when w.extension = '' then coalesce($3, s.nspname) else s.nspname end as schema,
    quote_ident(s.nspname) || '.' || quote_ident(t.typname) as source_name
  from wanted w join pg_type t on t.oid = w.oid join pg_namespace s on s.oid = t.typnamespace
),
named(oid, name) as (
  select oid, quote_ident(schema) || '.' || quote_ident(typname) from placed where extension = ''
  union all
  select typarray, quote_ident(schema) || '.' || quote_ident(typname) || '[]' from placed
  where typarray <> 0 and extension = ''
)
select
  (select coalesce(json_agg(json_build_array(attname,
       coalesce((select name from named where oid = atttypid), format_type(atttypid, atttypmod)), attnotnull)
     order by attnum), '[]') from columns)::text,
  (select coalesce(json_agg(json_build_array(
      quote_ident(p.schema) || '.' || quote_ident(p.typname), p.schema, p.typname,
      case p.typtype
        when 'e' then 'CREATE TYPE ' || quote_ident(p.schema) || '.' || quote_ident(p.typname) || ' AS ENUM (' ||
          coalesce((select string_agg(quote_literal(e.enumlabel), ', ' order by e.enumsortorder)
                    from pg_enum e where e.enumtypid = p.oid), '') || ')'
        when 'd' then 'CREATE DOMAIN ' || quote_ident(p.schema) || '.' || quote_ident(p.typname) || ' AS ' ||
          coalesce((select name from named where oid = p.typbasetype), format_type(p.typbasetype, p.typtypmod)) ||
          case when p.typnotnull then ' NOT NULL' else '' end ||
          coalesce((select ' ' || string_agg(pg_get_constraintdef(c.oid), ' ' order by c.conname)
                    from pg_constraint c where c.contypid = p.oid and c.contype = 'c' and c.convalidated), '')
        when 'c' then case when (select relkind from pg_class where oid = p.typrelid) <> 'c' then '' else 'CREATE TYPE ' || quote_ident(p.schema) || '.' || quote_ident(p.typname) || ' AS (' ||
          (select string_agg(quote_ident(a.attname) || ' ' ||
                             coalesce((select name from named where oid = a.atttypid), format_type(a.atttypid, a.atttypmod)),
                             ', ' order by a.attnum)
           from pg_attribute a where a.attrelid = p.typrelid and a.attnum > 0 and not a.attisdropped) || ')' end
        else '' end,
      p.extension, p.used_by, p.source_name)
    order by p.depth desc, p.schema, p.typname), '[]')
   from placed p)::text
)SQL";

// The template with its NOT NULL test: a NOT VALID one (PostgreSQL 18)
// is not made, as the source's rows need not meet it.
const std::string& definition_sql() {
  static const std::string sql = [] {
    std::string out = kDefinitionTemplate;
    const std::string mark = "%NOT_NULL%";
    out.replace(out.find(mark), mark.size(), validated_not_null_sql("a"));
    return out;
  }();
  return sql;
}

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

std::optional<std::string> creation_refusal(const TableDefinition& definition, const std::vector<DefinedType>& missing,
                                            const QualifiedName& table) {
  for (const DefinedType& type : definition.types) {
    for (const DefinedType& other : definition.types) {
      if (&other == &type || other.name != type.name) continue;
      return "cannot create target table " + table.display() + ": its columns need types " + type.source_name +
             " and " + other.source_name + ", which would both be " + type.name +
             " in the target: create the target table by hand, with types of other names";
    }
  }
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
                                      const std::vector<std::string>& columns, const QualifiedName& target) {
  TableDefinition out;
  // Inside a transaction already (the snapshot a ranged first load
  // holds), in a savepoint of it: its setting goes with the savepoint,
  // and the transaction, its snapshot and its locks stay.
  const bool nested = source.in_transaction();
  // A failure leaves the transaction around a nested read as it was
  // (the read's savepoint rolled back), or ends the read's own.
  const auto give_up = [&] {
    if (!nested) return source.rollback_quietly();
    try {
      source.exec("ROLLBACK TO SAVEPOINT tm_definition; RELEASE SAVEPOINT tm_definition");
    } catch (const PgError&) {
      source.rollback_quietly();  // the held transaction failed with it: a write_range after it says so
    }
  };
  source.exec(nested ? "SAVEPOINT tm_definition" : "BEGIN READ ONLY");
  try {
    // The table is found by the session's search_path, as every other
    // statement finds a source_table written without its schema; only
    // then does the search_path narrow to pg_catalog.
    const std::string oid = source.exec("SELECT $1::regclass::oid::text", {table.quoted()}).text(0, 0);
    source.exec("SET LOCAL search_path = pg_catalog");
    const PgResult r = source.exec(definition_sql(), {oid, json_parameter(nlohmann::json(columns)), target.schema()});
    source.exec(nested ? "ROLLBACK TO SAVEPOINT tm_definition; RELEASE SAVEPOINT tm_definition" : "COMMIT");
    for (const auto& c : nlohmann::json::parse(r.text(0, 0))) {
      out.columns.push_back(DefinedColumn{c.at(0).get<std::string>(), c.at(1).get<std::string>(), c.at(2).get<bool>()});
    }
    for (const auto& t : nlohmann::json::parse(r.text(0, 1))) {
      out.types.push_back(DefinedType{t.at(0).get<std::string>(), t.at(1).get<std::string>(),
                                      t.at(2).get<std::string>(), t.at(3).get<std::string>(),
                                      t.at(4).get<std::string>(), t.at(5).get<std::string>(),
                                      t.at(6).get<std::string>()});
    }
  } catch (const nlohmann::json::exception& e) {
    give_up();
    throw PgError(ErrorKind::Transient, std::string("unexpected type definitions: ") + e.what());
  } catch (...) {
    give_up();
    throw;
  }
  return out;
}

}  // namespace tidemark
