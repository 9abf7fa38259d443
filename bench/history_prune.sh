#!/usr/bin/env bash
# What pruning the run history costs, and what it costs the runs going on
# meanwhile: TABLES tables' runs of one day, one a minute each (TABLES *
# 1440 rows), started 31 days ago, each table's last one failed, then one
# recent success each (which ends those failure streaks, so every old run
# goes); `tidemark serve` (retention 30d) prunes them from its start.
# Meanwhile a writer inserts and closes a run row every 10 ms, as runs do,
# timing each (psql's start included), for 10 s before serve starts and
# all through the pruning. Prints the passes, how long until only the
# recent runs were left, the writer's times before and during, the lock
# waits over 50 ms the server logged (log_lock_waits), and the state
# schema's size (what tidemark_state_bytes shows) before and after a
# VACUUM. Starts its own throwaway PostgreSQL.
#   TABLES=10000 bench/history_prune.sh   (a day of 10,000 tables: 14.4M rows)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
TABLES=${TABLES:-1000}
tidemark=$(built_tidemark)

bench_start
createdb bench_source
createdb bench_target
metrics_port=$(free_port)
bench_daemon_file "$dir/tidemark.yaml" bench_source bench_target \
  "metrics: { listen: \"127.0.0.1:$metrics_port\" }" "history: { retention: 30d }"
sed -i 's/level: warn/level: info/' "$dir/tidemark.yaml"  # the pass's own line is at info
"$tidemark" migrate --config "$dir/tidemark.yaml" >/dev/null
state() { psql -X -At -d bench_target -c "$1"; }

rows=$((TABLES * 1440))
start=$EPOCHREALTIME
state "insert into tidemark.runs (pipeline, table_name, trigger, status, started_at, finished_at)
       select 'bench', 't' || (g % $TABLES), 'schedule', case when g >= $rows - $TABLES then 'failed' else 'success' end,
              now() - interval '31 days' + (g / $TABLES) * interval '1 minute',
              now() - interval '31 days' + (g / $TABLES) * interval '1 minute' + interval '1 second'
       from generate_series(0, $rows - 1) g
       order by g" >/dev/null
state "insert into tidemark.runs (pipeline, table_name, trigger, status, started_at, finished_at)
       select 'bench', 't' || g, 'schedule', 'success', now(), now() from generate_series(0, $TABLES - 1) g" >/dev/null
state "vacuum analyze tidemark.runs" >/dev/null
printf 'history: %s runs of %s tables inserted in %.1f s\n' "$rows" "$TABLES" "$(seconds_since "$start")"
state "alter system set log_lock_waits = on" >/dev/null
state "alter system set deadlock_timeout = '50ms'" >/dev/null
state "select pg_reload_conf()" >/dev/null
bytes_before=$(state "select sum(pg_total_relation_size(c.oid)) from pg_class c
                      where c.relnamespace = 'tidemark'::regnamespace and c.relkind in ('r', 'm', 'p')")

# The writer: what a run does to the history, every 10 ms, timed.
writer() {
  local t0
  for _ in $(seq 1 100000); do
    t0=$EPOCHREALTIME
    psql -X -q -d bench_target -c "with r as (insert into tidemark.runs (pipeline, table_name, trigger, status)
                 values ('writer', 'w', 'schedule', 'running') returning run_id)
               update tidemark.runs set status = 'success', finished_at = now() where run_id = (select run_id from r)" \
      >/dev/null
    seconds_since "$t0" >>"$dir/writer.times"
    sleep 0.01
  done
}
writer &
writer_pid=$!
bench_on_exit "kill $writer_pid 2>/dev/null"
sleep 10
mv "$dir/writer.times" "$dir/writer.before"

start=$EPOCHREALTIME
"$tidemark" serve --config "$dir/tidemark.yaml" >"$dir/serve.log" 2>&1 &
serve=$!
bench_on_exit "kill $serve 2>/dev/null"
expected=$TABLES
pruned() { [ "$(state "select count(*) from tidemark.runs where pipeline = 'bench'")" = "$expected" ]; }
until pruned; do
  kill -0 "$serve" 2>/dev/null || { cat "$dir/serve.log"; exit 1; }
  sleep 0.2
done
took=$(seconds_since "$start")
sleep 2
kill "$writer_pid" 2>/dev/null || true
grep -o "pruned .*" "$dir/serve.log"
printf 'pruned to each table'"'"'s recent success (%s runs left) in %.1f s, serve'"'"'s start included\n' \
  "$expected" "$took"
for phase in before times; do
  sort -g "$dir/writer.$phase" | awk -v phase="$phase" '{ v[NR] = $1 } END {
    printf "writer %s: %d run rows; median %.1f ms, p99 %.1f ms, slowest %.1f ms\n",
      phase == "before" ? "before serve" : "while pruning", NR, v[int(NR / 2) + 1] * 1000,
      v[int(NR * 0.99) + 1] * 1000, v[NR] * 1000 }'
done
waits=$(grep -c "still waiting for" "$TIDEMARK_PG_DIR/server.log" || true)
echo "lock waits over 50 ms the server logged: ${waits:-0}"
state "vacuum tidemark.runs" >/dev/null
bytes_after=$(state "select sum(pg_total_relation_size(c.oid)) from pg_class c
                     where c.relnamespace = 'tidemark'::regnamespace and c.relkind in ('r', 'm', 'p')")
echo "state schema: $((bytes_before / 1048576)) MiB before, $((bytes_after / 1048576)) MiB after (space kept for reuse)"
