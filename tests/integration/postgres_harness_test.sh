#!/usr/bin/env bash
# The integration tests' databases are the throwaway servers scripts/test
# started, never a system service: the primary's data folder is under
# TIDEMARK_PG_DIR, and its hot standby (under TIDEMARK_STANDBY_DIR) is in
# recovery and replays what the primary writes.
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
source "$(dirname "$0")/lib.sh"
: "${TIDEMARK_STANDBY_HOST:?run through scripts/test, which starts the hot standby (start_standby)}"
test_setup harness

standby() { psql -X -At -h "$TIDEMARK_STANDBY_HOST" -p "$TIDEMARK_STANDBY_PORT" "$@"; }
under() { case "$1" in "$2"/*) return 0 ;; *) echo "$1 is not under $2" >&2; return 1 ;; esac; }

check "the primary is the throwaway server" \
  under "$(psql -X -At -d postgres -c "select current_setting('data_directory')")" "$TIDEMARK_PG_DIR"
check "the primary is not in recovery" test "$(psql -X -At -d postgres -c 'select pg_is_in_recovery()')" = f
check "the standby is a throwaway server too" \
  under "$(standby -d postgres -c "select current_setting('data_directory')")" "$TIDEMARK_STANDBY_DIR"
check "the standby is in recovery" test "$(standby -d postgres -c 'select pg_is_in_recovery()')" = t

# The database and the table are new, so seeing the row proves replay, not
# a leftover from the base backup.
psql -X -q -v ON_ERROR_STOP=1 -d "${db}_source" -c "create table replayed (id int primary key); insert into replayed values (42)"
replayed() { [ "$(standby -d "${db}_source" -c 'select id from replayed' 2>/dev/null)" = 42 ]; }
check "a table created on the primary becomes visible on the standby" eventually 15 replayed
refuses_writes() { ! standby -d "${db}_source" -c 'insert into replayed values (1)' 2>/dev/null; }
check "the standby refuses writes" refuses_writes
report
