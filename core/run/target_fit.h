// Whether a target table can take an incremental table's loads run after
// run, not only the first: a first load copies straight into an empty
// table, every later one upserts on the key (INSERT ... ON CONFLICT), which
// needs more of the target. Pure: it is given the target's catalog as the
// Target port read it and the table's configuration, and returns the
// refusal a person can act on, before anything is written. Thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/config/config_model.h"
#include "core/watermark/cursor_value.h"
#include "core/sql/column_shape.h"
#include "core/sql/relation_kind.h"
#include "core/sql/row_trigger.h"
#include "core/sql/unique_index.h"

namespace tidemark {

// What Target::check reads of the target table.
struct TargetTable {
  std::vector<ColumnShape> columns;  // every column, in order, with not_null and fill
  std::vector<UniqueIndex> unique_indexes;
  // Enabled BEFORE triggers that run for each row an INSERT or UPDATE
  // writes, the table's own first: they can change the values a load writes.
  std::vector<RowTrigger> row_changing_triggers;
  // False only for a table with create_target that does not exist yet
  // (its first run creates it); nothing else is then known.
  bool exists = true;
};

// The source table's side of it: its columns (whether a key column can
// hold NULL there: a view's, never NOT NULL in the catalog, always can) and
// unique indexes (whether the source keeps one row per NULL key), which
// only a table has.
struct SourceKeys {
  const std::vector<ColumnShape>& columns;
  const std::vector<UniqueIndex>& unique_indexes;
  RelationKind kind = RelationKind::Table;
};

// The target's refusal, naming the target table, the cause and the fix; nothing
// when the target can take the loads. `loaded` are the columns a chunk copies.
// - The key needs a valid, immediate unique index on exactly its columns
//   (INCLUDE columns aside), without a WHERE clause or expressions.
// - A key column that can hold NULL in the source and in the target needs
//   that index to treat NULLs as equal (NULLS NOT DISTINCT): a plain unique
//   index lets a NULL key repeat, so every update of such a row adds one.
//   A source table must then keep one row per NULL key as well (a unique
//   index on the key with NULLS NOT DISTINCT), or rows it holds twice
//   under a NULL key become one; a view cannot show it, and its key is
//   trusted as any view's is. A key column NOT NULL in the target fails
//   the load loudly instead.
// - A key column whose equality in the target is coarser than in the
//   source (core/sql/key_equality.h) would hold two source rows as one.
// - A copied enum column whose target enum lacks labels the source's has
//   (a label added or renamed on the source): every row with one would
//   fail; the missing labels and the ALTER TYPE that adds (or renames)
//   them are named (core/sql/key_equality.h).
// - A copied column the target fills itself as identity ALWAYS refuses
//   the source's values in every upsert; a key column the target generates
//   is no key of the source's.
// - An enabled BEFORE trigger that runs for each row an INSERT or UPDATE
//   writes can change the values a load writes: the target would not hold
//   the source's values.
std::optional<std::string> refuse_target(const TableConfig& table,
                                         const SourceKeys& source, const TargetTable& target,
                                         const std::vector<std::string>& loaded);

// What may still go wrong with a target refuse_target accepts, one line
// each in the operator's words (validate prints them):
// - with lookback 0s, a cursor no default, identity or trigger of the
//   source stamps (`cursor_stamped_by_database` false): the application's
//   clock or id allocator is not the database's, and its rows can commit
//   below the watermark;
// - a unique index of the target other than the key's, checked row by
//   row, on loaded columns: values that swap within one window, or a row
//   deleted in the source, fail every load.
std::vector<std::string> load_warnings(const TableConfig& table, CursorType cursor_type,
                                       bool cursor_stamped_by_database, const TargetTable& target,
                                       const std::vector<std::string>& loaded);

}  // namespace tidemark
