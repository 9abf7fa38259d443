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
#include "core/sql/column_shape.h"

namespace tidemark {

// A unique index (or the index of a primary key or unique constraint) of
// the target, as its catalog describes it.
struct UniqueIndex {
  std::string name;
  std::vector<std::string> columns;  // its key columns in order; INCLUDE columns are not among them
  bool valid = true;                 // false: a CREATE INDEX CONCURRENTLY that failed left it unusable
  bool immediate = true;             // false: DEFERRABLE, which ON CONFLICT cannot use
  bool nulls_not_distinct = false;   // NULLS NOT DISTINCT (PostgreSQL 15): a NULL key is one key
  bool partial = false;              // it has a WHERE clause
  bool expressions = false;          // some key column is an expression
};

// What Target::check reads of the target table.
struct TargetTable {
  std::vector<ColumnShape> columns;  // every column, in order, with not_null and fill
  std::vector<UniqueIndex> unique_indexes;
};

// The target's refusal, naming `target_name`, the cause and the fix; nothing
// when the target can take the loads. `source` is every source column (its
// nullability decides whether a key can be NULL there), `loaded` the
// columns a chunk copies.
// - The key needs a valid, immediate unique index on exactly its columns
//   (INCLUDE columns aside), without a WHERE clause or expressions.
// - A key column that can hold NULL in the source and in the target needs
//   that index to treat NULLs as equal (NULLS NOT DISTINCT): a plain unique
//   index lets a NULL key repeat, so every update of such a row adds one.
//   A key column NOT NULL in the target fails the load loudly instead.
// - A copied column the target fills itself as identity ALWAYS refuses
//   the source's values in every upsert; a key column the target generates
//   is no key of the source's.
std::optional<std::string> refuse_target(const TableConfig& table, const std::string& target_name,
                                         const std::vector<ColumnShape>& source, const TargetTable& target,
                                         const std::vector<std::string>& loaded);

}  // namespace tidemark
