#!/usr/bin/env bash
# The invariant under fire: while a writer inserts and updates rows (some
# committed late, with a cursor below the watermark), tidemark serve is
# killed with SIGKILL at random moments and its sessions are terminated
# from the server side, again and again. At the end the target must hold
# exactly the source's rows: nothing lost, nothing doubled.
# Usage: crash_proof_test.sh TIDEMARK_BINARY
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
source "$(dirname "$0")/lib.sh"
tidemark=$1
rounds=${CRASH_ROUNDS:-10}
test_setup proof
psql -X -q -v ON_ERROR_STOP=1 -d "${db}_source" -c \
  "create table orders (id bigint primary key, status text not null, amount int not null,
                        updated_at timestamptz not null default clock_timestamp())"
# Reads go through a view that sleeps 50 ms per query, so that a run spans
# many chunk transactions long enough for the kills to land inside them.
psql -X -q -v ON_ERROR_STOP=1 -d "${db}_source" -c \
  "create view orders_slow as select o.id, o.status, o.amount, o.updated_at
   from orders o cross join (select pg_sleep(0.05)) s"
psql -X -q -v ON_ERROR_STOP=1 -d "${db}_target" -c \
  "create table orders (id bigint primary key, status text not null, amount int not null, updated_at timestamptz not null)"

daemon_config warn
# max_window cuts each run into several committed chunks, so kills land
# between chunks as well as inside them.
cat >"$work/pipelines/proof.yaml" <<'YAML'
pipeline: proof
source: source
target: target
schedule: "* * * * * *"
tables:
  - { name: orders, source_table: orders_slow, target_table: orders, key: [id], cursor: updated_at, lookback: 10s, max_window: 1s }
YAML

# The writer: new rows, updates, and late rows whose cursor is 3 s old when
# they commit (inside the lookback), each in its own transaction.
writer() {
  local i=0
  while [ ! -f "$work/stop-writer" ]; do
    i=$((i + 1))
    psql -X -q -d "${db}_source" >/dev/null 2>&1 <<SQL || true
insert into orders (id, status, amount) values ($i, 'new', $i % 97);
update orders set status = 'paid', amount = amount + 1, updated_at = clock_timestamp() where id = $(( (i * 7) % i + 1 ));
insert into orders (id, status, amount, updated_at) select 1000000 + $i, 'late', 1, clock_timestamp() - interval '3 seconds' where $i % 5 = 0;
SQL
    sleep 0.05
  done
}
writer &
pids+=("$!")

for round in $(seq 1 "$rounds"); do
  "$tidemark" serve --config "$work/tidemark.yaml" >>"$work/serve.log" 2>&1 &
  serve=$!
  pids+=("$serve")
  sleep "$(awk -v r="$RANDOM" 'BEGIN { printf "%.2f", 0.8 + (r % 180) / 100 }')"
  if [ $((round % 3)) -eq 0 ]; then
    cut_sessions  # from the server side, before the kill
    sleep 0.5
  fi
  kill -9 "$serve" 2>/dev/null || true
  wait "$serve" 2>/dev/null || true
done

touch "$work/stop-writer"
wait "${pids[0]}" 2>/dev/null || true
sleep 11  # every late row is now older than its window: one last run must see it through the lookback

# A clean finish: runs until one succeeds with nothing left to read.
for _ in 1 2 3; do
  "$tidemark" run proof --config "$work/tidemark.yaml" >>"$work/run.log" 2>&1 && break
done

source_rows=$(psql -X -At -d "${db}_source" -c "select md5(string_agg(o::text, ',' order by id)), count(*) from orders o")
target_rows=$(psql -X -At -d "${db}_target" -c "select md5(string_agg(o::text, ',' order by id)), count(*) from orders o")
abandoned=$(psql -X -At -d "${db}_target" -c "select count(*) from tidemark.runs where error like 'abandoned%'")
runs=$(psql -X -At -d "${db}_target" -c "select count(*) from tidemark.runs")
echo "rounds: $rounds, runs: $runs, abandoned by a kill: $abandoned, source: ${source_rows#*|} rows"
check "the target holds exactly the source's rows" test "$source_rows" = "$target_rows"
if [ "$failed" -gt 0 ]; then
  echo "source $source_rows, target $target_rows" >&2
  psql -X -d "${db}_source" -c "select * from orders order by id" >"$work/source.txt"
  psql -X -d "${db}_target" -c "select * from orders order by id" >"$work/target.txt"
  diff "$work/source.txt" "$work/target.txt" | head -20 >&2 || true
fi
report
