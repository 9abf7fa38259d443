// Whether a target key column tells apart every two keys its source column
// tells apart: a target whose equality is coarser (a case-insensitive
// collation, character(n)'s padding, a type that rounds) holds two source
// rows as one. Pure; thread-safe.
#pragma once

#include <optional>
#include <string>

#include "core/sql/column_shape.h"

namespace tidemark {

// Why `target`, a key column, can take two of `source`'s distinct values
// as one key, in the operator's words; nothing when it cannot. Only the
// pairings known to merge are named: a type the target parses from the
// source's text either keeps the value or fails the load.
std::optional<std::string> coarser_key_equality(const ColumnShape& source, const ColumnShape& target);

}  // namespace tidemark
