// What kind of relation a source table is, as far as reading it goes. A
// value type.
#pragma once

namespace tidemark {

// A foreign table has no storage here, and a query of it reaches another
// server: a read does not lock it first (core/sql/load_statements.h).
enum class RelationKind { Table, View, MaterializedView, ForeignTable };

}  // namespace tidemark
