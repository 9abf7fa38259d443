// A snapshot's fingerprint of one table: the statement that counts its
// loaded columns' rows and hashes them, the same on source and target, so
// that equal answers mean equal rows. Pure SQL text; thread-safe.
// Owned by the snapshot path (daemon/pg/data/pg_unit_of_work compares them).
#pragma once

#include <string>
#include <vector>

#include "core/sql/column_shape.h"
#include "core/text/sql_identifier.h"

namespace tidemark {

// One loaded column and its type on each side, as format_type() writes it
// (empty when that side's is unknown).
struct FingerprintColumn {
  std::string name;
  std::string source_type;
  std::string target_type;
};

// Each of `names` with its type in `source` and in `target` (the two
// sides' catalogs), empty where a side has no such column.
std::vector<FingerprintColumn> fingerprint_columns(const std::vector<std::string>& names,
                                                   const std::vector<ColumnShape>& source,
                                                   const std::vector<ColumnShape>& target);

// How a column's value enters its row's hash. Hashing a value by its
// type's own hash function skips turning it into text, but is exact only
// for types whose equality is identity: an integer, a uuid, a timestamp
// (its microseconds, whatever the session's time zone), bytes, text under
// a byte-wise collation. Everything else (1.0 and 1.00, -0 and 0,
// '1 day' and '24 hours', an enum's OID, jsonb's numbers, a
// case-insensitive collation) goes by its text, as does a column whose
// type differs between the sides.
// Value: the column itself. Halves: a bigint and its high 32 bits (its
// hash folds the halves together). Sent: a timestamp or time's binary
// send format, hashed as bytes (its hash folds likewise). Collated: text
// under "C". Text: its text under "C".
enum class FingerprintHash { Value, Halves, Sent, Collated, Text };
FingerprintHash fingerprint_hash(const FingerprintColumn& column);

// Whether rows are hashed as records (hash_record_extended, PostgreSQL 14
// and later) between servers of these major versions: only when both are.
inline bool hash_record_between(int source_major_version, int target_major_version) {
  return source_major_version >= 14 && target_major_version >= 14;
}

// One row's 64-bit hash (a bigint) over `columns`, by the rules above:
// hash_record_extended of a record of their fields where both servers are
// 14 or later (`hash_record`), else of the row's text. The expression
// names the columns unqualified.
std::string row_hash_sql(const std::vector<FingerprintColumn>& columns, bool hash_record);

// One statement over `table`: its row count and a 64-bit fingerprint of
// its rows (each row's hash, combined without regard to order). Where both
// servers are 14 or later (`hash_record`): each row hashed as a record of
// its columns (fingerprint_hash), that 64-bit hash hashed again as text
// to mix it, the rows combined with bit_xor.
// Before 14: each row's text hashed, combined with a sum (rows_hash_sql). Two tables that
// give the same hold the same rows but with a chance of 2^-64, the bar
// reconcile's buckets hold as well. With `with_horizon` (PostgreSQL 13
// and later), two more columns: the statement's snapshot's xmin and xmax
// (core/diff/recent_rows.h).
// With `rows_repeat` (a table without a key, whose identical rows count)
// the rows are combined with the sum whatever the versions: bit_xor
// cancels identical rows in pairs, so two copies of one row changed into
// two copies of another would leave it as it was.
std::string fingerprint_sql(const QualifiedName& table, const std::vector<FingerprintColumn>& columns,
                            bool hash_record, bool with_horizon = false, bool rows_repeat = false);

// The hash of a set of rows as a bigint, whatever their order: where both
// servers are 14 or later (`hash_record`) the bit_xor of their mixed
// hashes, before it their sum folded into a bigint. An aggregate over
// the statement's rows; 0 for none.
// With `rows_repeat`, the sum folded into a bigint whatever the versions
// (see fingerprint_sql).
std::string rows_hash_sql(const std::vector<FingerprintColumn>& columns, bool hash_record, bool rows_repeat = false);

// One row's hash mixed so that rows can be combined with bit_xor (the
// record's hash combines its fields linearly): the fingerprint's term,
// and a block's.
std::string mixed_row_hash_sql(const std::vector<FingerprintColumn>& columns, bool hash_record);

}  // namespace tidemark
