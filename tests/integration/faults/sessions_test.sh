#!/usr/bin/env bash
# Faults: the daemon's sessions killed and cancelled under it. While a
# writer changes two tables that `serve` loads every second: for 20 s a
# random tidemark session is terminated or has its statement cancelled
# every 0.1 to 0.3 s (one at work, when one is); then every tidemark
# session at once, three times;
# then t1's target table is locked out for 8 s (t2 goes on meanwhile).
# The daemon never dies, both tables run again within 10 s of each fault
# ending, no lock is left behind, and once the writer stops each target
# equals its source.
# Usage: sessions_test.sh TIDEMARK_BINARY
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/netns.sh"
source "$(dirname "$0")/workload.sh"
tidemark=$1
faults_setup sessions

psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "create database source" -c "create database target"
target=dbname=target
stamped_tables dbname=source "$target" 20000
# t1 is read through a view that takes 0.3 s a statement, so that its runs
# spend most of their time in a statement, where a fault hits them.
psql -X -q -v ON_ERROR_STOP=1 -d source -c \
  "create view slow_t1 as select * from t1 where (select pg_sleep(0.3)) is not null"
ns_daemon_config "$work/tidemark.yaml" 127.0.0.1 application_name=tidemark_faults \
  'metrics: { listen: "127.0.0.1:19468" }'
every_second_pipeline source target slow_t1
start_writer dbname=source 20000 5000
ns_spawn "$work/serve.log" "$tidemark" serve --config "$work/tidemark.yaml"
serve_pid=$spawned

q() { state_query "$1"; }
# tidemark's sessions: on the target, and on the source, where its read-only
# sessions name themselves.
ours="(application_name = 'tidemark_faults' or application_name like 'tidemark (read-only source)%')"
check "both tables run" eventually 20 ran_since "$EPOCHREALTIME"

# Random terminations and cancels for 20 s.
faults=0
busy=0
deadline=$((SECONDS + 20))
while [ $SECONDS -lt $deadline ]; do
  action=$([ $((RANDOM % 2)) = 0 ] && echo pg_terminate_backend || echo pg_cancel_backend)
  state=$(q "select state from (select state, $action(pid) from pg_stat_activity where $ours
                                 order by state = 'idle', random() limit 1) s")
  [ -n "$state" ] && faults=$((faults + 1))
  [ -n "$state" ] && [ "$state" != idle ] && busy=$((busy + 1))
  sleep "0.$((1 + RANDOM % 3))"
done
ended=$EPOCHREALTIME
check "random faults: ${faults} sessions hit, the daemon still up" kill -0 "$serve_pid"
check "random faults: both tables run again within 10 s" eventually 10 ran_since "$ended"
failures=$(grep -c "failed (transient)" "$work/serve.log" || true)

# Every session at once, three times: each time the daemon has opened
# sessions again, so that the next cut meets new ones.
reopened() { test "$(q "select count(*) from pg_stat_activity where $ours and pid not in (${cut:-0})")" -ge 1; }
for _ in 1 2 3; do
  cut=$(q "select string_agg(pid::text, ',') filter (where gone)
           from (select pid, pg_terminate_backend(pid) as gone from pg_stat_activity where $ours) s")
  check "every session at once: the daemon opens new ones" eventually 10 reopened
done
ended=$EPOCHREALTIME
check "every session at once: the daemon still up" kill -0 "$serve_pid"
check "every session at once: both tables run again within 10 s" eventually 10 ran_since "$ended"

# t1's target locked out for 8 s: t2 goes on.
psql -X -q -d target -c "set application_name = 'lockout'" -c "begin" -c "lock table t1" \
  -c "select pg_sleep(8)" >/dev/null &
locker=$!
pids+=("$locker")
held() {
  test "$(q "select count(*) from pg_locks l join pg_stat_activity a using (pid)
              where a.application_name = 'lockout' and l.relation = 't1'::regclass and l.granted")" = 1
}
check "lockout: the test holds t1's table" eventually 5 held
locked=$EPOCHREALTIME
t1_waits() {  # a run of t1 waits for its table
  test "$(q "select count(*) from pg_locks l join pg_stat_activity a using (pid)
              where a.application_name = 'tidemark_faults' and l.relation = 't1'::regclass and not l.granted")" -ge 1
}
check "lockout: t1's run waits for its table" eventually 5 t1_waits
check "lockout: t2 goes on while t1's table is locked" eventually 6 ran_since "$locked" t2
wait "$locker"
ended=$EPOCHREALTIME
check "lockout: t1 runs again within 10 s of its table's release" eventually 10 ran_since "$ended" t1

stop_writer
check "after the writer stops, both watermarks pass its last write" eventually 20 covered "$EPOCHREALTIME"
targets_equal_sources dbname=source
kill -TERM "$serve_pid"
check "SIGTERM: the daemon exits 0" wait "$serve_pid"
check "no advisory lock is left behind" test "$(q "select count(*) from pg_locks where locktype = 'advisory'")" = 0
check "no run is left running" test "$(q "select count(*) from tidemark.runs where status = 'running'")" = 0
echo "figures: ${faults} sessions terminated or cancelled in 20 s (${busy} in a statement or a transaction;" \
  "${failures} runs failed as transient and were run again), then every session three times, then a lockout of 8 s"

if [ "$failed" -gt 0 ]; then
  grep -v "skipped the firing" "$work/serve.log" | tail -n 30 >&2 || true
fi
report
