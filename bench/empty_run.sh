#!/usr/bin/env bash
# What a run of an unchanged table costs PostgreSQL: one `serve` fires
# TABLES unchanged tables every PERIOD seconds (100 tables per pipeline,
# each loading the one source table into one of a hundred targets; source,
# target and state in one database); after a warm-up, pg_stat_statements
# counts MEASURE seconds of statements. Prints the runs in that time, the
# statements and the server's time (planning and execution) per run, all
# of serve's sessions counted (the fleet's renewals and the state
# monitor's refreshes included, spread over the runs), and the statements
# that cost the most in all.
# Starts its own throwaway PostgreSQL.
#   bench/empty_run.sh                      # 500 tables every 10 s, 60 s
#   TABLES=100 PERIOD=5 MEASURE=30 bench/empty_run.sh
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
TABLES=${TABLES:-500}
PERIOD=${PERIOD:-10}
MEASURE=${MEASURE:-60}
tidemark=$(built_tidemark)

TIDEMARK_PG_SETTINGS="-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all -c pg_stat_statements.track_planning=on" bench_start
serve=
stop_serve() { [ -z "$serve" ] || kill "$serve" 2>/dev/null; }
bench_on_exit stop_serve
bench_many_tables_db
psql -X -q -d bench -c "create extension pg_stat_statements"
bench_many_pipelines "$dir/pipelines" "$TABLES" "*/$PERIOD * * * * *"
port=$(free_port)
bench_many_tables_daemon_file "$dir/tidemark.yaml" "$port"
"$tidemark" serve --config "$dir/tidemark.yaml" 2>"$dir/serve.log" &
serve=$!
q() { psql -X -At -d bench -c "$1"; }

# Warm: the lease's wait, every table's first run, sessions pooled.
sleep $((PERIOD * 2 + 8))
q "select pg_stat_statements_reset()" >/dev/null
from=$(date +%s)
sleep "$MEASURE"
to=$(date +%s)
runs=$(q "select count(*) from tidemark.runs where started_at >= to_timestamp($from) and started_at < to_timestamp($to)")
q "select 'runs ' || $runs || ' in ' || $MEASURE || ' s; per run: '
        || round(sum(calls)::numeric / nullif($runs, 0), 1) || ' statements, '
        || round((sum(total_exec_time + total_plan_time) / nullif($runs, 0))::numeric, 3) || ' ms of server time'
   from pg_stat_statements s join pg_database d on d.oid = s.dbid where d.datname = 'bench'"
echo "most server time in all (calls per run, ms per run, of it planning, statement):"
q "select round(calls::numeric / nullif($runs, 0), 2) || ' | '
        || round(((total_exec_time + total_plan_time) / nullif($runs, 0))::numeric, 4) || ' | '
        || round((total_plan_time / nullif($runs, 0))::numeric, 4) || ' | '
        || left(regexp_replace(query, '\s+', ' ', 'g'), 110)
   from pg_stat_statements s join pg_database d on d.oid = s.dbid where d.datname = 'bench'
   order by total_exec_time + total_plan_time desc limit 25"
