// Whether a target column takes every value of its source column as the
// source tells them apart: a key whose equality is coarser (a
// case-insensitive collation, character(n)'s padding, a type that
// rounds) holds two source rows as one; an enum without one of the
// source's labels refuses its rows. Pure; thread-safe.
#pragma once

#include <optional>
#include <string>

#include "core/sql/column_shape.h"

namespace tidemark {

// Why `target`, a key column, can take two of `source`'s distinct values
// as one key, in the operator's words; nothing when it cannot. Only the
// pairings that merge whatever the data are named: a type the target
// parses from the source's text either keeps the value or fails the load.
// Two that merge only at the edges are accepted: timestamptz into
// timestamp (the repeated hour when the source session's zone goes back,
// none in UTC) and text into varchar(n) (a value longer by blanks only,
// which a store cuts to n).
std::optional<std::string> coarser_key_equality(const ColumnShape& source, const ColumnShape& target);

// Why `target`, an enum column, cannot take every value of `source`, an
// enum column too: the labels the source's enum has and the target's
// lacks, and the ALTER TYPE that fixes it (a rename where the source's
// labels are the target's with one in place changed, else an ADD VALUE
// for each); nothing when every label is there or either is no enum.
std::optional<std::string> missing_enum_labels(const ColumnShape& source, const ColumnShape& target);

}  // namespace tidemark
