#!/usr/bin/env bash
# Faults, both ways round, in a snapshot diff whose source (a view)
# answers late while a million target rows fill every buffer. The
# sessions tidemark opens tell the server to give up on a client that
# leaves its replies unacknowledged for two leases (tcp_user_timeout; 6 s
# with the 3 s lease here), and the kernel counts a window the client
# keeps closed the same way.
# - A live member must not be taken for a vanished one: with the source
#   answering after 8 s, the run succeeds and the target ends equal to the
#   source. The diff reads the target's stream ahead while it waits (once a
#   second, emptying the socket); without that, the server cut the
#   target's stream 6 s into the wait.
# - A vanished member must let go: one whose packets stop 3 s into a diff
#   whose source would answer after 120 s has every session ended, and its
#   table's lock released, within 30 s. Before the diff read ahead, its
#   statements lifted the user timeout, and the server kept the target's
#   session (and the lock) until its retransmissions gave up, about 15
#   minutes.
# Usage: stalled_stream_test.sh TIDEMARK_BINARY
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/netns.sh"
tidemark=$1
faults_setup stalled

# A text key: the diff streams every row's hash (30 MB from the target),
# not an integer key's blocks. The view answers a statement that orders
# its rows (the diff's stream) only after `delay` seconds; the others at once.
rows=1000000
psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "create database source" -c "create database target"
psql -X -q -v ON_ERROR_STOP=1 -d source -c \
  "create table t (id text primary key, v text not null);
   insert into t select 'k' || lpad(g::text, 7, '0'), 'row ' || g from generate_series(1, $rows) g;
   create table delay (seconds int not null);
   insert into delay values (8);
   create function slow() returns boolean language sql volatile
     as \$\$select pg_sleep(case when current_query() ilike '%order by%' then (select seconds from delay) else 0 end)
                is not null\$\$;
   create view slow_t as select id, v from t where (select slow())"
psql -X -q -v ON_ERROR_STOP=1 -d target -c \
  "create table t (id text primary key, v text not null);
   insert into t select 'k' || lpad(g::text, 7, '0'), 'row ' || g from generate_series(1, $rows) g;
   update t set v = 'changed' where right(id, 3) = '000'"

ns_daemon_config "$work/tidemark.yaml" 127.0.0.1 "" "fleet: { lease: 3s }"
ns_pipeline "$work/pipelines" shop "{ name: t, mode: snapshot, source_table: slow_t, target_table: t, key: [id] }"

check_waits "a snapshot run whose diff waits 8 s for the source succeeds" 8 \
  in_ns "$tidemark" run shop --config "$work/tidemark.yaml" >"$work/run.log" 2>&1
digest() { psql -X -At -d "$1" -c "select count(*), md5(string_agg(id || v, ',' order by id collate \"C\")) from t"; }
check "the target equals the source" test "$(digest target)" = "$(digest source)"
check "the run diffed: 1,000 rows changed" grep -q "diff: 1000 changed, 0 missing, 0 gone" "$work/run.log"

# The same diff on a member at 127.0.0.2 (a pipeline of its own, so that
# its first run diffs the whole table again), with the source answering
# after 120 s; its host vanishes 3 s into the diff's streams (every packet
# dropped, then the process killed: no FIN, no RST).
psql -X -q -v ON_ERROR_STOP=1 -d source -c "update delay set seconds = 120"
psql -X -q -v ON_ERROR_STOP=1 -d target -c "update t set v = 'changed again' where right(id, 3) = '500'"
ns_daemon_config "$work/vanishing.yaml" 127.0.0.2 "application_name=vanishing" "fleet: { lease: 3s }" vanishing
ns_pipeline "$work/vanishing" again "{ name: t, mode: snapshot, source_table: slow_t, target_table: t, key: [id] }"
# Its sessions: the target's (also the state's) by its name, the source's
# by the name every read-only source session takes.
sessions_left() {
  psql -X -At -d postgres -c "select count(*) from pg_stat_activity
                               where application_name in ('vanishing', 'tidemark (read-only source)')"
}
diff_streaming() {
  test "$(psql -X -At -d target -c "select count(*) from pg_stat_activity where application_name = 'vanishing'
                                    and query ilike 'copy (select%order by%' and state = 'active'")" = 1
}
ns_spawn "$work/vanishing.log" "$tidemark" run again --config "$work/vanishing.yaml"
vanishing=$spawned
check "the member's diff streams the target's rows" eventually 30 diff_streaming
sleep 3
ns_vanish "$vanishing" 127.0.0.2
check "the member had sessions when it vanished" test "$(sessions_left)" -gt 0
no_sessions_left() { test "$(sessions_left)" = 0; }
check "the server ends every session of the vanished member within 30 s" eventually 30 no_sessions_left
gone=$(seconds_since "$vanished")
check "nothing holds the table's lock" \
  test "$(psql -X -At -d target -c "select count(*) from pg_locks where locktype = 'advisory'")" = 0
echo "figures: the vanished member's sessions gone after ${gone} s (lease 3 s)"
ns_heal 127.0.0.2

if [ "$failed" -gt 0 ]; then
  tail -n 20 "$work/run.log" "$work/vanishing.log" >&2 || true
  grep -v checkpoint "$ns_server_dir/server.log" | tail -n 20 >&2 || true
fi
report
