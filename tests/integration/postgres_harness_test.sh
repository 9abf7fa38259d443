#!/usr/bin/env bash
# The integration tests' databases are the throwaway servers scripts/test
# started, never a system service: the test server's data folder is under
# TIDEMARK_PG_DIR; the hot standby and its own primary are under
# TIDEMARK_STANDBY_DIR, the standby in recovery replaying what that primary
# writes; both PgBouncers (under TIDEMARK_PGBOUNCER_DIR) lead to the test
# server in the pool modes they claim.
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
source "$(dirname "$0")/lib.sh"
: "${TIDEMARK_STANDBY_HOST:?run through scripts/test, which starts the hot standby (start_standby)}"
: "${TIDEMARK_PGBOUNCER_HOST:?run through scripts/test, which starts PgBouncer (start_pgbouncer)}"
test_setup harness

standby() { psql -X -At -h "$TIDEMARK_STANDBY_HOST" -p "$TIDEMARK_STANDBY_PORT" "$@"; }
standby_primary() { psql -X -At -h "$TIDEMARK_STANDBY_HOST" -p "$TIDEMARK_STANDBY_PRIMARY_PORT" "$@"; }
under() { case "$1" in "$2"/*) return 0 ;; *) echo "$1 is not under $2" >&2; return 1 ;; esac; }

check "the test server is a throwaway server" \
  under "$(psql -X -At -d postgres -c "select current_setting('data_directory')")" "$TIDEMARK_PG_DIR"
check "the test server is not in recovery" test "$(psql -X -At -d postgres -c 'select pg_is_in_recovery()')" = f
check "the standby is a throwaway server too" \
  under "$(standby -d postgres -c "select current_setting('data_directory')")" "$TIDEMARK_STANDBY_DIR"
check "the standby's primary is one too" \
  under "$(standby_primary -d postgres -c "select current_setting('data_directory')")" "$TIDEMARK_STANDBY_DIR"
check "the standby is in recovery" test "$(standby -d postgres -c 'select pg_is_in_recovery()')" = t
check "its primary is not" test "$(standby_primary -d postgres -c 'select pg_is_in_recovery()')" = f

# The database and the table are new, so seeing the row proves replay, not
# a leftover from the base backup.
replica_db=${db}_replayed
standby_primary -q -v ON_ERROR_STOP=1 -d postgres -c "create database $replica_db"
standby_primary -q -v ON_ERROR_STOP=1 -d "$replica_db" -c "create table replayed (id int primary key); insert into replayed values (42)"
replayed() { [ "$(standby -d "$replica_db" -c 'select id from replayed' 2>/dev/null)" = 42 ]; }
check "a table created on the primary becomes visible on the standby" eventually 15 replayed
refuses_writes() { ! standby -d "$replica_db" -c 'insert into replayed values (1)' 2>/dev/null; }
check "the standby refuses writes" refuses_writes
no_test_databases() {
  local said
  ! said=$(standby -d "${db}_source" -c 'select 1' 2>&1) && grep -q "database \"${db}_source\" does not exist" <<<"$said"
}
check "the standby does not replay the test server's databases" no_test_databases
standby_primary -q -d postgres -c "drop database $replica_db with (force)"

bouncer() { local port=$1; shift; psql -X -At -h "$TIDEMARK_PGBOUNCER_HOST" -p "$port" "$@"; }
session=$TIDEMARK_PGBOUNCER_SESSION_PORT
transaction=$TIDEMARK_PGBOUNCER_TRANSACTION_PORT
pool_mode() { bouncer "$1" -d pgbouncer -c 'show config' | awk -F'|' '$1 == "pool_mode" { print $2 }'; }
for mode in session transaction; do
  port_variable=TIDEMARK_PGBOUNCER_${mode^^}_PORT
  port=${!port_variable}
  check "the $mode PgBouncer runs from its temp folder" kill -0 "$(cat "$TIDEMARK_PGBOUNCER_DIR/$mode.pid")"
  check "the $mode PgBouncer pools by $mode" test "$(pool_mode "$port")" = "$mode"
  check "the $mode PgBouncer leads any database to the throwaway primary" \
    under "$(bouncer "$port" -d "${db}_source" -c "select current_setting('data_directory')")" "$TIDEMARK_PG_DIR"
done
# name|host|port|database|force_user|pool_size|min_pool_size|reserve_pool|pool_mode|...
database_entry() { bouncer "$transaction" -d pgbouncer -c 'show databases' | awk -F'|' -v name="$1" '$1 == name { print $6 "|" $9 }'; }
check "postgres_pool1 is a pool of one server" test "$(database_entry postgres_pool1)" = "1|"
check "postgres_statement pools statements" test "$(database_entry postgres_statement)" = "2|statement"
# One client's transactions share a session in session mode, so a setting
# made in one is there in the next.
kept=$(bouncer "$session" -d "${db}_source" -c "select set_config('tidemark.mark', 'kept', false)" \
         -c "select current_setting('tidemark.mark')" | tail -n 1)
check "session pooling keeps a session's settings between its transactions" test "$kept" = kept
report
