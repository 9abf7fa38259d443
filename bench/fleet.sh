#!/usr/bin/env bash
# A fleet on one machine: MEMBERS `serve` replicas share TABLES unchanged
# tables that fire every PERIOD seconds (100 tables per pipeline, each
# loading the one source table into one of a hundred targets). Measures,
# from the run rows (host, pid, started_at) and the members' metrics:
#   share      tables each member owns once settled (goal: TABLES/MEMBERS
#              within 10 %)
#   steady     over STEADY seconds: firings run, firings that ran twice
#              (two runs of a table in one period), firings missed (a table
#              with fewer runs than periods), lock skips, start delay p50
#              and p95 (from started_at against the firing's instant)
#   failover   kill -9 of member 1: until the others own all its tables,
#              until each of them has run on another member, and whether
#              any missed more than one firing or ran twice
#   overlap    runs of one table whose [started_at, finished_at) overlap
# Starts its own throwaway PostgreSQL.
#   bench/fleet.sh                                   # 3 members, 6,000 tables, every 30 s
#   MEMBERS=3 TABLES=600 PERIOD=10 STEADY=60 bench/fleet.sh
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
MEMBERS=${MEMBERS:-3}
TABLES=${TABLES:-6000}
PERIOD=${PERIOD:-30}
STEADY=${STEADY:-120}
LEASE=${LEASE:-6s}
WORKERS=${WORKERS:-8}
tidemark=$(built_tidemark)

TIDEMARK_PG_SETTINGS="-c max_connections=300 -c shared_buffers=256MB" bench_start
declare -A pid port
stop_members() {
  local n
  for n in "${!pid[@]}"; do kill -9 "${pid[$n]}" 2>/dev/null || true; done
}
bench_on_exit stop_members
bench_many_tables_db
bench_many_pipelines "$dir/pipelines" "$TABLES" "*/$PERIOD * * * * *"

start_member() {
  local n=$1
  port[$n]=$(free_port)
  bench_many_tables_daemon_file "$dir/member$n.yaml" "${port[$n]}" "max_concurrent_runs: $WORKERS" \
    "fleet: { lease: $LEASE, expect_members: $MEMBERS }"
  "$tidemark" serve --config "$dir/member$n.yaml" 2>"$dir/member$n.log" &
  pid[$n]=$!
  until curl -sf "http://127.0.0.1:${port[$n]}/healthz" >/dev/null; do sleep 0.2; done
}
metric() { curl -sf "http://127.0.0.1:${port[$1]}/metrics" | awk -v s="$2" '$1 == s { print $2 }'; }
locked() {
  curl -sf "http://127.0.0.1:${port[$1]}/metrics" |
    awk '/^tidemark_runs_skipped_total\{.*reason="locked"/ { s += $2 } END { print s + 0 }'
}
q() { psql -X -At -d bench -c "$1"; }

for n in $(seq 1 "$MEMBERS"); do start_member "$n"; done
settled() {
  local n sum=0
  for n in "$@"; do
    [ "$(metric "$n" tidemark_fleet_members)" = "$#" ] || return 1
    sum=$((sum + $(metric "$n" tidemark_tables_owned)))
  done
  [ "$sum" = "$TABLES" ]
}
start=$EPOCHREALTIME
until settled $(seq 1 "$MEMBERS"); do sleep 0.5; done
echo "settled in $(seconds_since "$start") s"
for n in $(seq 1 "$MEMBERS"); do echo "member $n owns $(metric "$n" tidemark_tables_owned)"; done

# Steady state: from the next period boundary, STEADY seconds.
now=$(date +%s)
from=$(((now / PERIOD + 1) * PERIOD))
to=$((from + STEADY))
declare -A locked_before
for n in $(seq 1 "$MEMBERS"); do locked_before[$n]=$(locked "$n"); done
sleep $((to - now + 5))
periods=$((STEADY / PERIOD))
q "with r as (select pipeline, table_name, started_at,
                     to_timestamp(floor(extract(epoch from started_at) / $PERIOD) * $PERIOD) as firing
              from tidemark.runs where started_at >= to_timestamp($from) and started_at < to_timestamp($to)),
        per_table as (select pipeline, table_name, count(*) as runs, count(distinct firing) as firings from r group by 1, 2)
   select 'steady: runs ' || (select count(*) from r)
       || ', firings run ' || (select sum(firings) from per_table) || ' of ' || $TABLES * $periods
       || ', ran twice ' || (select coalesce(sum(runs - firings), 0) from per_table)
       || ', tables missing a firing ' || ($TABLES - (select count(*) from per_table where firings = $periods))
       || ', start delay p50 ' || round((percentile_cont(0.5) within group (order by extract(epoch from started_at - firing)))::numeric, 3)
       || ' s, p95 ' || round((percentile_cont(0.95) within group (order by extract(epoch from started_at - firing)))::numeric, 3)
       || ' s, p99 ' || round((percentile_cont(0.99) within group (order by extract(epoch from started_at - firing)))::numeric, 3) || ' s'
   from r"
for n in $(seq 1 "$MEMBERS"); do
  echo "steady: member $n lock skips $(($(locked "$n") - ${locked_before[$n]}))"
done

# Failover: kill -9 member 1 mid-period.
sleep $((PERIOD / 3))
victim=${pid[1]}
q "select distinct table_name, pipeline from tidemark.runs where pid = $victim" >"$dir/victim_tables"
kill -9 "$victim"
unset 'pid[1]'
killed=$EPOCHREALTIME
killed_s=$(date +%s)
echo "failover: member 1 (pid $victim) killed; it had run $(wc -l <"$dir/victim_tables") tables"
moved() {
  [ "$(q "select count(*) from (select distinct pipeline, table_name from tidemark.runs
          where pid = $victim) v
          where not exists (select from tidemark.runs r where r.pipeline = v.pipeline and r.table_name = v.table_name
                            and r.pid <> $victim and r.started_at > to_timestamp($killed_s))")" = 0 ]
}
survivors=()
for n in "${!pid[@]}"; do survivors+=("$n"); done
until settled "${survivors[@]}"; do sleep 0.1; done
echo "failover: the others owned every table $(seconds_since "$killed") s after its death"
until moved; do sleep 0.2; done
echo "failover: every table of member 1 ran on another member $(seconds_since "$killed") s after its death"
sleep $((PERIOD * 2))
q "with r as (select pipeline, table_name, started_at,
                     floor(extract(epoch from started_at) / $PERIOD) as slot
              from tidemark.runs where started_at >= to_timestamp($killed_s - $PERIOD)),
        per as (select pipeline, table_name, count(*) - count(distinct slot) as doubled,
                       max(slot) - min(slot) + 1 - count(distinct slot) as gaps from r group by 1, 2)
   select 'failover: firings that ran twice ' || sum(doubled) || ', tables with a missed period ' || count(*) filter (where gaps > 0)
   from per"
q "select 'overlap: runs of a table overlapping another run of it: ' || count(*) from tidemark.runs a join tidemark.runs b
     on a.pipeline = b.pipeline and a.table_name = b.table_name and a.run_id < b.run_id
    and b.started_at < a.finished_at and a.started_at < b.finished_at"
for n in "${!pid[@]}"; do
  echo "after: member $n owns $(metric "$n" tidemark_tables_owned), lock skips $(locked "$n")"
  echo "after: member $n cpu $(awk '{ printf "%.1f", ($14 + $15) / 100 }' "/proc/${pid[$n]}/stat") s"
done
