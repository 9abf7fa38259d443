// The SQL text of reconcile, built from the table's config: each side's
// bucket aggregate and key listing, and the target's delete, mark and
// re-copy of chosen keys. Every identifier is quoted; the watermark is a
// typed literal made of digits; keys travel as one bound JSON parameter
// read back with json_populate_recordset over the table's own row type,
// so each key column is parsed by its own type. Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/config/config_model.h"
#include "core/sql/key_row.h"

namespace tidemark {

// One side's queries. Parameters: bucket_sums $1 = bucket count;
// keys $1 = bucket count, $2 = bigint[] of buckets; estimate $1 = the
// quoted table name. `row_hash` is each row's hash over the compared
// columns (row_hash_sql: a bigint expression naming them unqualified),
// the same on both sides; a bucket's checksum covers key and hash.
struct KeySideQueries {
  std::string estimate;     // one bigint: rows per the planner's statistics, 0 when unknown
  std::string bucket_sums;  // bucket, rows, checksum (text) of each non-empty bucket
  std::string keys;         // bucket, key text, flag, row hash, then each key column as text; ordered
};

// The source: compared rows are those with cursor < watermark; keys()
// returns every row, flagged by that condition.
KeySideQueries source_key_queries(const TableConfig& table, const CursorValue& watermark, const std::string& row_hash);
// The target: compared rows are those not marked (mark_column IS NULL;
// empty `mark_column`: every row); keys() flags the marked ones.
KeySideQueries target_key_queries(const TableConfig& table, const std::string& mark_column,
                                  const std::string& row_hash);

// KeySideQueries::keys with the bucket count and list as literals made of
// digits, for a cursor WITH HOLD (which binds no parameters).
std::string source_key_listing(const TableConfig& table, const CursorValue& watermark, const std::string& row_hash,
                               std::int64_t buckets, const std::vector<std::int64_t>& which);
std::string target_key_listing(const TableConfig& table, const std::string& mark_column, const std::string& row_hash,
                               std::int64_t buckets, const std::vector<std::int64_t>& which);

// The keys as a JSON array of objects, column name to text value, for
// the $1 of the statements below.
std::string keys_json(const std::vector<std::string>& key_columns, const std::vector<KeyRow>& keys);

// A key column as one side's catalog has it: its SQL type (format_type's
// text), which its keys are read as, and whether a key of the batch at
// hand is NULL in it. A NULL key (possible where the target's unique
// index treats NULLs as equal, core/run/target_fit.h) must match a NULL:
// such a column is compared with IS NOT DISTINCT FROM, which no index
// serves, so only a batch that holds one pays for it.
struct KeyColumnType {
  std::string type;
  bool holds_null = false;
};

// Whether any of `keys` is NULL in column `column` (0-based).
bool keys_hold_null(const std::vector<KeyRow>& keys, std::size_t column);

// On `table` (a side's table name), $1 = keys_json: the 1-based positions
// in $1 of the keys the table holds, each key column compared by value,
// read as its type in `key_types` (one per key column); with a
// `mark_column`, only in rows where it is null (not marked deleted).
std::string held_keys(const TableConfig& table, const QualifiedName& name, const std::vector<KeyColumnType>& key_types,
                      const std::string& mark_column = {});

// A FROM item over `name` (either side's table): the `columns` of its
// rows whose key is in $1 = keys_json, read as `key_types`, each found
// through the key's index (the keys drive the join). Only those columns
// are read, which a role granted SELECT on them alone may read.
std::string rows_of_keys_from(const TableConfig& table, const QualifiedName& name,
                              const std::vector<std::string>& columns, const std::vector<KeyColumnType>& key_types);

// On the target, $1 = keys_json: deletes the rows of those keys, each key
// column read as its type in `key_types`.
std::string delete_keys_statement(const TableConfig& table, const std::vector<KeyColumnType>& key_types);
// On the source, $1 = keys_json: `columns` of the rows of those keys (the
// row diff's copy of changed and missing rows), keys read as `key_types`.
std::string rows_of_keys_statement(const TableConfig& table, const std::vector<std::string>& columns,
                                   const std::vector<KeyColumnType>& key_types);

struct ReconcileStatements {
  std::string delete_keys;  // $1 = keys_json: deletes those target rows
  std::string mark_keys;    // $1 = keys_json: sets mark_column = now() where still null (action mark)
  std::string copy_source;  // on the source, $1 = keys_json: the rows of those keys still below the watermark
};

// Each key column on each side, in key order.
struct KeyTypes {
  std::vector<KeyColumnType> source;
  std::vector<KeyColumnType> target;
};

// The keys in $1 are read as `key_types`: the target's for the delete and
// the mark, the source's for the copy.
ReconcileStatements reconcile_statements(const TableConfig& table, const std::vector<std::string>& columns,
                                         const std::string& mark_column, const CursorValue& watermark,
                                         const KeyTypes& key_types);

}  // namespace tidemark
