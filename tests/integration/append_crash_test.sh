#!/usr/bin/env bash
# Exactly once under fire: pgbench's built-in script writes
# pgbench_history, a table without a key, while tidemark serve loads it as
# an append table and is killed with SIGKILL at random moments, twenty
# times, its sessions sometimes cut from the server side first. At the end
# the target must equal the source as a multiset: no row twice, none
# missing.
# Usage: append_crash_test.sh TIDEMARK_BINARY
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
source "$(dirname "$0")/lib.sh"
tidemark=$1
rounds=${CRASH_ROUNDS:-20}
test_setup append_crash
pgbench -i -q -s 1 "${db}_source" >"$work/pgbench-init.log" 2>&1

daemon_config "${LOG_LEVEL:-warn}"
# mtime is CURRENT_TIMESTAMP, the start of pgbench's transaction, stamped
# long before it commits; max_window cuts each run into several committed
# chunks, so kills land between chunks as well as inside them.
cat >"$work/pipelines/bench.yaml" <<'YAML'
pipeline: bench
source: source
target: target
schedule: "* * * * * *"
tables:
  - name: history
    mode: append
    source_table: public.pgbench_history
    target_table: raw.pgbench_history
    cursor: mtime
    max_window: 1s
    create_target: true
YAML

pgbench -n -c 4 -j 2 -T 600 "${db}_source" >"$work/pgbench.log" 2>&1 &
bench=$!
pids+=("$bench")

# A killed member keeps the table until its lease ends (the shortest);
# each round below also removes the killed member's row, as if its lease
# had ended, so that the next member owns the table at once: what is
# tried here is the load's exactness under kills, not the fleet's
# hand-over (tests/integration/fleet_test.sh).
echo "fleet: { lease: 3s }" >>"$work/tidemark.yaml"

# Each member is killed once its first run has started, at a random
# moment of it (or just after it), within 80 ms.
mid_run=0
for round in $(seq 1 "$rounds"); do
  "$tidemark" serve --config "$work/tidemark.yaml" >>"$work/serve.log" 2>&1 &
  serve=$!
  pids+=("$serve")
  for _ in $(seq 1 100); do
    started=$(psql -X -At -d "${db}_target" -c "select count(*) from tidemark.runs where pid = $serve" 2>/dev/null ||
      echo 0)
    [ "${started:-0}" -gt 0 ] && break
    sleep 0.05
  done
  sleep "$(awk -v r="$RANDOM" 'BEGIN { printf "%.3f", (r % 80) / 1000 }')"
  if [ $((round % 4)) -eq 0 ]; then
    cut_sessions
    sleep 0.3
  fi
  kill -9 "$serve" 2>/dev/null || true
  wait "$serve" 2>/dev/null || true
  running=$(psql -X -At -d "${db}_target" -c "select count(*) from tidemark.runs where pid = $serve and status = 'running'")
  mid_run=$((mid_run + running))
  psql -X -q -d "${db}_target" -c "delete from tidemark.members where pid = $serve" >/dev/null
  # Rows pile up meanwhile: the next run has several chunks to commit.
  sleep "$(awk -v r="$RANDOM" 'BEGIN { printf "%.2f", 0.5 + (r % 100) / 100 }')"
done

kill -TERM "$bench" 2>/dev/null || true
wait "$bench" 2>/dev/null || true

loaded_by_serve=$(psql -X -At -d "${db}_target" -c "select count(*) from raw.pgbench_history")

# A clean finish, once the source's clock has passed every row pgbench
# committed by more than the horizon's margin.
sleep 2
for _ in 1 2 3; do
  "$tidemark" run bench --config "$work/tidemark.yaml" >>"$work/run.log" 2>&1 && break
done

multiset="select md5(coalesce(string_agg(h::text, ',' order by h::text), '')), count(*) from %s h"
# shellcheck disable=SC2059
source_rows=$(psql -X -At -d "${db}_source" -c "$(printf "$multiset" public.pgbench_history)")
# shellcheck disable=SC2059
target_rows=$(psql -X -At -d "${db}_target" -c "$(printf "$multiset" raw.pgbench_history)")
runs=$(psql -X -At -d "${db}_target" -c "select count(*) from tidemark.runs")
echo "rounds: $rounds, killed mid-run: $mid_run, runs: $runs, loaded by serve: $loaded_by_serve, source: ${source_rows#*|} rows," \
  "target: ${target_rows#*|} rows"
check "pgbench wrote rows while the daemon was killed" test "${source_rows#*|}" -gt 100
check "serve committed rows between the kills" test "$loaded_by_serve" -gt 0
check "kills landed inside runs" test "$mid_run" -gt 0
check "the target equals the source as a multiset" test "$source_rows" = "$target_rows"
if [ "$failed" -gt 0 ]; then
  psql -X -At -d "${db}_target" -c "select h::text, count(*) from raw.pgbench_history h group by 1 having count(*) > 1
                                    limit 5" >&2 || true
  tail -20 "$work/serve.log" >&2 || true
fi
report
