// The SQL of the row diff (core/diff/row_diff.h): each side's (key, row
// hash) stream as one binary COPY in the key order both sides and the
// merge agree on, and each key column's KeyOrder. Every identifier quoted.
// Pure; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "core/config/config_model.h"
#include "core/diff/key_blocks.h"
#include "core/diff/recent_rows.h"
#include "core/diff/row_hash_stream.h"
#include "core/sql/reconcile_statements.h"
#include "core/sql/row_fingerprint.h"

namespace tidemark {

// The settings the diff's statements run under, local to their
// transaction: JIT would compile them for longer than they run, and a
// parallel plan of the rows of chosen blocks scans the whole table once
// for every block instead of reading each block's range of the index.
inline constexpr const char* kRowDiffPlanSettings =
    "SET LOCAL jit = off; SET LOCAL max_parallel_workers_per_gather = 0";

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
// both sides' types). The row hash is row_hash_sql over `columns`. A
// `where` (SQL over the table's columns, unqualified, without parameters)
// limits both sides to the rows it holds for.
RowHashStatements row_hash_statements(const TableConfig& table, const std::vector<FingerprintColumn>& columns,
                                      bool hash_record, const std::string& where = {});

// A table keyed by one integer column `key`: its min and max (as bigint
// text, NULL without rows), which the key's index answers at once.
std::string key_range_statement(const QualifiedName& table, const std::string& key);

// The first level for a table keyed by one integer column (`blocks` over
// its range): each side's blocks as (block, checksum, rows), the checksum
// the bit_xor of its rows' mixed hashes (mixed_row_hash_sql) xor'd with
// its row count, every block of `blocks` (empty ones as (0, 0)), the
// NULL keys' block last. Its streams read as row hash streams of one KeyOrder::Integer key whose
// entries stand for `rows` rows.
RowHashStatements block_statements(const TableConfig& table, const std::vector<FingerprintColumn>& columns,
                                   bool hash_record, const KeyBlocks& blocks);

// row_hash_statements limited to the rows of the blocks `which`
// (ascending), and of the NULL keys' block with `null_block`.
RowHashStatements row_hash_statements_in(const TableConfig& table, const std::vector<FingerprintColumn>& columns,
                                         bool hash_record, const KeyBlocks& blocks,
                                         const std::vector<std::int64_t>& which, bool null_block);

// The first look at a changed table (core/diff/recent_rows.h): on each
// side, the keys of at most `most` rows written since that side's horizon
// in `since`, as row hash streams whose hash is 0. A scan that hashes
// nothing: the rows' xmin is tested, only the rows that pass are read.
RowHashStatements recent_key_statements(const TableConfig& table, const std::vector<FingerprintColumn>& columns,
                                        const SnapshotHorizon& since, std::int64_t most);

// On each side, $1 = keys_json of keys read as that side's `*_keys`: the
// rows of those keys as (key columns, mixed row hash: the fingerprint's
// term where rows are hashed as records), in key order. Plain SELECTs,
// not COPY (which binds no parameters); the key columns as the COPY
// streams send them, in text.
RowHashStatements keyed_hash_statements(const TableConfig& table, const std::vector<FingerprintColumn>& columns,
                                        const std::vector<KeyColumnType>& source_keys,
                                        const std::vector<KeyColumnType>& target_keys);

// A table without a key, compared as a multiset: on each side every
// distinct row hash (row_hash_sql) with its count, ascending by hash. Its
// streams read (counted) as row hash streams of one KeyOrder::Integer key,
// the row hash, whose hash is the count and whose entries stand for that
// many rows: the row diff's missing and changed keys are the row values
// the target lacks copies of or holds too many of, its gone keys those
// the source no longer holds.
// A `where` (SQL over the table's columns, unqualified, without
// parameters) limits both sides to the rows it holds for.
RowHashStatements multiset_statements(const TableConfig& table, const std::vector<FingerprintColumn>& columns,
                                      bool hash_record, const std::string& where = {});

// The rows of a table without a key whose row hash is among $1 (a
// bigint[] in its text form): on the target, their DELETE; on the source,
// a SELECT of the loaded columns for PgCopyStream::copy_query; on each
// side, each such row as ROW(...)::text with how often it occurs, for a
// report.
struct RowsOfHashes {
  std::string delete_target;
  std::string select_source;
  std::string counted_source;
  std::string counted_target;
};
// hashes[at, at + most) as the text of a bigint[], the $1 of RowsOfHashes.
std::string hashes_array(const std::vector<std::int64_t>& hashes, std::size_t at = 0,
                         std::size_t most = static_cast<std::size_t>(-1));

RowsOfHashes rows_of_hashes_statements(const TableConfig& table, const std::vector<FingerprintColumn>& columns,
                                       bool hash_record);

}  // namespace tidemark
