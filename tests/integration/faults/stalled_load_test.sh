#!/usr/bin/env bash
# Faults, both ways round, in a load whose target stops taking rows
# halfway (a check that sleeps on one row) while the source has a
# million more to send. The sessions tidemark opens tell the server to
# give up on a client that leaves its replies unacknowledged for two
# leases (tcp_user_timeout; 6 s with the 3 s lease here), and the kernel
# counts a window the client keeps closed the same way.
# - A live member must not be taken for a vanished one: with the target
#   stalled for 8 s, the first load succeeds and the target ends equal to
#   the source. The copy reads the source ahead while the target waits;
#   without that, the source server would cut its session 6 s into the
#   stall (source sessions used to lift the user timeout instead).
# - Nor while its target waits for its table's lock: a first load into a
#   table held locked for 10 s succeeds.
# - A vanished member must let go of the source: one whose packets stop
#   while its target is stalled has its source session, and that
#   session's lock on the source table, ended within 30 s, so that an
#   ALTER TABLE of the source goes through. With the user timeout lifted,
#   the server kept them until its retransmissions gave up, about 15
#   minutes.
# Usage: stalled_load_test.sh TIDEMARK_BINARY
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/netns.sh"
tidemark=$1
faults_setup stalled-load

rows=1000000
psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "create database source" -c "create database target"
psql -X -q -v ON_ERROR_STOP=1 -d source -c \
  "create table t (id bigint primary key, v text not null, updated_at timestamptz not null);
   insert into t select g, 'row ' || g, now() - interval '1 hour' from generate_series(1, $rows) g"
# A check on the target sleeps `stall` seconds on the row in the middle:
# a check runs as each row arrives (a trigger that could change the row
# tidemark refuses, and an AFTER trigger runs at the statement's end).
psql -X -q -v ON_ERROR_STOP=1 -d target -c \
  "create table stall (seconds int not null);
   insert into stall values (8);
   create function stall_at(id bigint) returns boolean language plpgsql as \$\$
     begin
       if id = $((rows / 2)) then perform pg_sleep((select seconds from stall)); end if;
       return true;
     end \$\$;
   create table t (id bigint primary key, v text not null, updated_at timestamptz not null,
                   constraint stall check (stall_at(id)));
   create table u (like t including all);
   create table w (id bigint primary key, v text not null, updated_at timestamptz not null)"

ns_daemon_config "$work/tidemark.yaml" 127.0.0.1 "" "fleet: { lease: 3s }"
ns_pipeline "$work/pipelines" shop "{ name: t, source_table: t, target_table: t, key: [id], cursor: updated_at }"

check_waits "a first load whose target stalls 8 s halfway succeeds" 8 \
  in_ns "$tidemark" run shop --config "$work/tidemark.yaml" >"$work/run.log" 2>&1
digest() { psql -X -At -d "$1" -c "select count(*), md5(string_agg(id || v || updated_at, ',' order by id)) from $2"; }
check "the target equals the source" test "$(digest target t)" = "$(digest source t)"

# A first load into a table the test holds locked for 10 s: the run waits
# for it (in its first statement on the table) with the source already
# sending, which it reads ahead meanwhile.
ns_pipeline "$work/pipelines" locked "{ name: w, source_table: t, target_table: w, key: [id], cursor: updated_at }"
psql -X -q -d target -c "begin" -c "lock table w in access exclusive mode" -c "select pg_sleep(10)" \
  -c "commit" >/dev/null 2>&1 &
pids+=("$!")
w_locked() { test "$(psql -X -At -d target -c "select count(*) from pg_locks where relation = 'w'::regclass
                                                and mode = 'AccessExclusiveLock' and granted")" = 1; }
check "the test holds w's lock" eventually 10 w_locked
check_waits "a first load that waits 10 s for its target's lock succeeds" 7 \
  in_ns "$tidemark" run locked --config "$work/tidemark.yaml" >"$work/locked.log" 2>&1
check "the locked target equals the source" test "$(digest target w)" = "$(digest source t)"

# The same load on a member at 127.0.0.2, into another table, with the
# target stalled for 120 s; its host vanishes 3 s into the stall (every
# packet dropped, then the process killed: no FIN, no RST).
psql -X -q -v ON_ERROR_STOP=1 -d target -c "update stall set seconds = 120"
ns_daemon_config "$work/vanishing.yaml" 127.0.0.2 "application_name=vanishing" "fleet: { lease: 3s }" vanishing
ns_pipeline "$work/vanishing" again "{ name: t, source_table: t, target_table: u, key: [id], cursor: updated_at }"
target_stalled() {
  test "$(psql -X -At -d target -c "select count(*) from pg_stat_activity
                                    where application_name = 'vanishing' and wait_event = 'PgSleep'")" = 1
}
source_sessions() {
  psql -X -At -d source -c "select count(*) from pg_stat_activity
                            where datname = 'source' and application_name = 'tidemark (read-only source)'"
}
no_source_session() { test "$(source_sessions)" = 0; }
ns_spawn "$work/vanishing.log" "$tidemark" run again --config "$work/vanishing.yaml"
vanishing=$spawned
check "the member's target stalls halfway through its load" eventually 60 target_stalled
sleep 3
ns_vanish "$vanishing" 127.0.0.2
check "the member had a source session when it vanished" test "$(source_sessions)" -gt 0
check "the server ends the vanished member's source session within 30 s" eventually 30 no_source_session
gone=$(seconds_since "$vanished")
check "an ALTER TABLE of the source table goes through at once" \
  psql -X -q -v ON_ERROR_STOP=1 -d source -c "set lock_timeout = '2s'" -c "alter table t add column extra int"
echo "figures: the vanished member's source session gone after ${gone} s (lease 3 s)"
ns_heal 127.0.0.2

if [ "$failed" -gt 0 ]; then
  tail -n 20 "$work/run.log" "$work/locked.log" "$work/vanishing.log" >&2 || true
  grep -v checkpoint "$ns_server_dir/server.log" | tail -n 20 >&2 || true
fi
report
