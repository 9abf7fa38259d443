// The SQL of the row diff (core/diff/row_diff.h): each side's (key, row
// hash) stream as one binary COPY in the key order both sides and the
// merge agree on, and each key column's KeyOrder. Every identifier quoted.
// Pure; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "core/config/config_model.h"
#include "core/diff/row_hash_stream.h"
#include "core/sql/row_fingerprint.h"

namespace tidemark {

// How key column `column` is ordered and sent: an integer of either side's
// integer types as a bigint, in its own order (which its index gives); a
// uuid on both sides as its text in its own order (its bytes' order is its
// text's); anything else as its text, ordered under COLLATE "C".
KeyOrder key_order(const FingerprintColumn& column);

struct RowHashStatements {
  std::vector<KeyOrder> order;  // each key column's, in key order
  // COPY (SELECT key columns..., row hash ORDER BY key) TO STDOUT (FORMAT
  // binary): a bigint or a text a key column, a bigint the hash.
  std::string source;
  std::string target;
};

// Requires every key column among `columns` (the loaded columns, each with
// both sides' types). The row hash is row_hash_sql over `columns`.
RowHashStatements row_hash_statements(const TableConfig& table, const std::vector<FingerprintColumn>& columns,
                                      bool hash_record);

}  // namespace tidemark
