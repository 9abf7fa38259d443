// What `tidemark discover` reads of a source database's catalog, table by
// table: columns with their defaults, unique indexes, and the row
// triggers with their functions. Filled by daemon/pg/data/catalog_reader and
// judged by core/discover/pipeline_discovery. Plain value types.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/sql/column_shape.h"
#include "core/sql/unique_index.h"
#include "core/text/sql_identifier.h"

namespace tidemark {

struct CatalogColumn {
  std::string name;
  std::string type;  // format_type(): "timestamp with time zone", "integer", "numeric(5,2)"
  bool not_null = false;
  std::string default_expression;  // pg_get_expr() of its default; empty when none
  ColumnFill fill = ColumnFill::None;
};


struct CatalogTrigger {
  std::string name;
  std::string function;           // schema-qualified, as display() writes it
  std::string language;           // plpgsql, sql, c, internal
  std::string source;             // pg_proc.prosrc: the body, or a C symbol
  std::vector<std::string> arguments;  // the trigger's own arguments
  bool before = false;
  bool for_each_row = false;
  bool on_insert = false;
  bool on_update = false;
};

struct CatalogTable {
  QualifiedName name;  // schema-qualified
  bool partitioned = false;  // declaratively partitioned: its partitions are not tables of their own here
  std::int64_t estimated_rows = 0;  // the planner's estimate (its partitions' for a partitioned table); 0 unknown
  std::vector<CatalogColumn> columns;
  std::vector<UniqueIndex> unique_indexes;
  std::vector<CatalogTrigger> triggers;  // enabled, user-defined
};

}  // namespace tidemark
