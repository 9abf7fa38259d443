#include "daemon/pg/data/catalog_reader.h"

#include <nlohmann/json.hpp>

#include "daemon/pg/data/relation_catalog.h"
#include "daemon/pg/libpq/json_parameter.h"

namespace tidemark {
namespace {

// pg_trigger.tgargs from its hex text: `count` arguments, each ended by a
// NUL byte. Throws PgError on text that is not that.
std::vector<std::string> trigger_arguments(const std::string& hex, int count) {
  if (hex.size() % 2 != 0) throw PgError(ErrorKind::Transient, "unexpected trigger arguments: " + hex);
  std::string bytes;
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    bytes += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  }
  std::vector<std::string> out;
  std::size_t at = 0;
  while (static_cast<int>(out.size()) < count) {
    const std::size_t end = bytes.find('\0', at);
    if (end == std::string::npos) throw PgError(ErrorKind::Transient, "unexpected trigger arguments: " + hex);
    out.push_back(bytes.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

}  // namespace
std::vector<CatalogTable> read_source_catalog(PgConnection& connection, const std::vector<std::string>& schemas) {
  // tgtype bits: 1 row, 2 before, 4 insert, 16 update. tgargs holds the
  // arguments, each ended by a NUL byte, read as hex: encode()'s escape
  // form would write a non-ASCII byte as octal.
  const std::string sql =
      "select n.nspname, c.relname, c.relkind = 'p',"
      " (select coalesce(json_agg(json_build_object('name', a.attname, 'type', format_type(a.atttypid, a.atttypmod),"
      "   'not_null', " + validated_not_null_sql("a") + ", 'default', pg_get_expr(d.adbin, d.adrelid), 'identity', a.attidentity::text,"
      "   'generated', a.attgenerated::text) order by a.attnum), '[]')::text"
      "  from pg_attribute a left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum"
      "  where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped),"
      " " + unique_indexes_sql("c.oid", connection.server_major_version()) + ","
      " (select coalesce(json_agg(json_build_object('name', t.tgname,"
      "   'function', quote_ident(pn.nspname) || '.' || quote_ident(p.proname), 'language', l.lanname,"
      "   'source', p.prosrc,"
      "   'arguments', encode(t.tgargs, 'hex'), 'argument_count', t.tgnargs,"
      "   'before', t.tgtype & 2 <> 0, 'row', t.tgtype & 1 <> 0, 'insert', t.tgtype & 4 <> 0,"
      "   'update', t.tgtype & 16 <> 0) order by t.tgname), '[]')::text"
      "  from pg_trigger t join pg_proc p on p.oid = t.tgfoid join pg_namespace pn on pn.oid = p.pronamespace"
      "  join pg_language l on l.oid = p.prolang"
      "  where t.tgrelid = c.oid and not t.tgisinternal and t.tgenabled in ('O', 'A')),"
      " case when c.relkind = 'p' then (select coalesce(sum(greatest(pc.reltuples, 0)), 0) from pg_partition_tree(c.oid) pt"
      "   join pg_class pc on pc.oid = pt.relid where pt.isleaf) else greatest(c.reltuples, 0) end::bigint"
      " from pg_class c join pg_namespace n on n.oid = c.relnamespace"
      " where c.relkind in ('r', 'p') and not c.relispartition"
      " and n.nspname not in ('pg_catalog', 'information_schema', 'tidemark') and n.nspname !~ '^pg_'"
      " and ($1::json is null or n.nspname in (select json_array_elements_text($1::json)))"
      // An extension's own tables (PostGIS' spatial_ref_sys, say) are its to fill.
      " and not exists (select from pg_depend e where e.classid = 'pg_class'::regclass and e.objid = c.oid"
      "   and e.deptype = 'e')"
      " order by n.nspname, c.relname";
  // The schemas as a JSON list, as every list tidemark binds.
  const std::optional<std::string> wanted =
      schemas.empty() ? std::nullopt : std::optional<std::string>(json_parameter(nlohmann::json(schemas)));
  const PgResult r = connection.exec(sql, {wanted});
  std::vector<CatalogTable> out;
  try {
    for (int row = 0; row < r.rows(); ++row) {
      CatalogTable table;
      table.name = QualifiedName(r.text(row, 0), r.text(row, 1));
      table.partitioned = r.boolean(row, 2);
      table.estimated_rows = std::stoll(r.text(row, 6));
      for (const auto& c : nlohmann::json::parse(r.text(row, 3))) {
        CatalogColumn column;
        column.name = c.at("name").get<std::string>();
        column.type = c.at("type").get<std::string>();
        column.not_null = c.at("not_null").get<bool>();
        if (!c.at("default").is_null()) column.default_expression = c.at("default").get<std::string>();
        column.fill = column_fill(c.at("identity").get<std::string>(), c.at("generated").get<std::string>());
        table.columns.push_back(std::move(column));
      }
      table.unique_indexes = parse_unique_indexes(r.text(row, 4));
      for (const auto& t : nlohmann::json::parse(r.text(row, 5))) {
        CatalogTrigger trigger;
        trigger.name = t.at("name").get<std::string>();
        trigger.function = t.at("function").get<std::string>();
        trigger.language = t.at("language").get<std::string>();
        trigger.source = t.at("source").get<std::string>();
        trigger.arguments = trigger_arguments(t.at("arguments").get<std::string>(), t.at("argument_count").get<int>());
        trigger.before = t.at("before").get<bool>();
        trigger.for_each_row = t.at("row").get<bool>();
        trigger.on_insert = t.at("insert").get<bool>();
        trigger.on_update = t.at("update").get<bool>();
        table.triggers.push_back(std::move(trigger));
      }
      out.push_back(std::move(table));
    }
  } catch (const nlohmann::json::exception& e) {
    throw PgError(ErrorKind::Transient, std::string("unexpected catalog text: ") + e.what());
  }
  return out;
}

}  // namespace tidemark
