// What kind of relation a source table is, as far as reading it goes. A
// value type.
#pragma once

namespace tidemark {

// A table (plain, partitioned, or an inheritance parent) or a view is
// locked with LOCK TABLE, which takes its partitions, children or
// underlying tables along; a materialized view by a query of it; a
// foreign table has no storage here to lock.
enum class RelationKind { Table, View, MaterializedView, ForeignTable };

}  // namespace tidemark
