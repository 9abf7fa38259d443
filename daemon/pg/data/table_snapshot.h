// How a source transaction comes to hold one snapshot of a table, the
// way every snapshot run and ranged first load reads it: the clock
// before it, then REPEATABLE READ, the table's lock, and its columns
// checked as the lock holds them. Free functions over a connection the
// caller owns, on its thread. Throw PgError.
#pragma once

#include "core/run/cancel_token.h"
#include "core/run/run_ports.h"
#include "core/sql/load_statements.h"
#include "daemon/pg/libpq/pg_connection.h"

namespace tidemark {

// Where a snapshot stands on a server that tells rows by their xmin (14
// and later): the oldest transaction still running when it was taken.
inline constexpr const char* kSnapshotXminSql = "SELECT pg_snapshot_xmin(pg_current_snapshot())::text";

// The target's side of a snapshot horizon written by the transaction open
// on `target` (14 and later): past that transaction, whose rows are the
// source's as of the snapshot, not "written since". Throws PgError.
std::int64_t past_this_transaction(PgConnection& target);

// A snapshot's time from the source_clock statement's answer
// (core/sql/load_statements.h). Transient when NULL: a standby that has
// replayed nothing yet, which the retry reads again.
CursorValue snapshot_clock(const PgResult& clock);

// Begins a REPEATABLE READ READ ONLY transaction on `source` and takes
// the table's ACCESS SHARE lock before any statement takes the snapshot
// (a rewrite or TRUNCATE committed while the lock was awaited is then
// seen as it left the table, never as an empty one), then checks that the
// columns are still of the types `table_read` was inspected with
// (transient when not: the retry looks again). False, rolled back, when
// this role may not LOCK the table (LOCK TABLE wants a grant on the whole
// table, where a column grant serves a SELECT). A foreign table is not
// locked: it has no storage here.
bool begin_table_snapshot(PgConnection& source, const TableConfig& table, const SourceTable& table_read,
                          const LoadStatements& sql, const CancelToken& cancel);

// The name of the snapshot the transaction open on `source` holds
// (pg_export_snapshot), for other sessions to read in while it lasts,
// which no idle-in-transaction or transaction timeout then cuts short.
std::string export_snapshot(PgConnection& source);

// Begins a REPEATABLE READ READ ONLY transaction on `helper` that reads
// in the snapshot `name` (SET TRANSACTION SNAPSHOT): rows exactly as the
// exporting transaction sees them, which no idle-in-transaction or
// transaction timeout cuts short. It takes no lock: its caller does.
// Throws PgError (a transient one when the exporting transaction has
// ended: "invalid snapshot identifier").
void join_snapshot(PgConnection& helper, const std::string& name);

}  // namespace tidemark
