// What create_target makes in the target, read from the source's catalog:
// the loaded columns with their types written so that they resolve in any
// database (schema-qualified, a type tidemark makes in the target table's
// schema), and the user-defined types they need, in
// the order they must be created, each with its CREATE statement when it
// can be made (an enum, a domain, a composite) or the extension it comes
// from when it cannot. Read-only; on the calling thread, with a session it
// does not own.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/text/sql_identifier.h"
#include "daemon/pg/libpq/pg_connection.h"

namespace tidemark {

struct DefinedColumn {
  std::string name;
  std::string type;  // format_type() with every type outside pg_catalog schema-qualified
  bool not_null = false;
};

struct DefinedType {
  std::string name;       // schema-qualified and quoted: "public"."mpaa_rating"
  std::string schema;     // its schema, unquoted
  std::string type_name;  // its own name, unquoted
  std::string create;     // its CREATE TYPE or CREATE DOMAIN; empty when it cannot be made here
  std::string extension;  // the extension it belongs to; empty when none
  std::string used_by;    // a column whose type needs it, for messages
  std::string source_name;  // its name in the source, qualified and quoted
};

struct TableDefinition {
  std::vector<DefinedColumn> columns;  // in the source's column order
  std::vector<DefinedType> types;      // a type's dependencies before it
};

// The types of `definition` that `target` lacks, in creation order.
// Throws PgError.
std::vector<DefinedType> missing_types(PgConnection& target, const TableDefinition& definition);

// Why `table` cannot be created from `definition` on `target`: two of the
// source's types that would take one name in the target's schema, or the
// first type it lacks (`missing`) that tidemark cannot make (an
// extension's, a base or range type), with what to do; nothing when it
// can be.
std::optional<std::string> creation_refusal(const TableDefinition& definition, const std::vector<DefinedType>& missing,
                                            const QualifiedName& table);

// The definition of `columns` of `table` on `source` as `target` (the
// target table) is to be made: the types tidemark makes placed in its
// schema. In one read-only transaction of its own (the session must have
// none open). Throws PgError.
TableDefinition read_table_definition(PgConnection& source, const QualifiedName& table,
                                      const std::vector<std::string>& columns, const QualifiedName& target);

}  // namespace tidemark
