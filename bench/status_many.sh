#!/usr/bin/env bash
# `tidemark status` over many tables: TABLES tables (100 per pipeline),
# each with a watermark and a history of RUNS runs in the state (a tenth
# stale, one in a hundred failing, one in a thousand paused), then the
# median of REPEAT timings of `status`, `status --stale`, `status
# --stale --json`, `status --failing`, `status --paused` and `status p1
# --table 't1*'`, with the lines each printed. Starts its own throwaway
# PostgreSQL.
#   bench/status_many.sh
#   TABLES=50000 RUNS=20 REPEAT=3 bench/status_many.sh
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
TABLES=${TABLES:-10000}
RUNS=${RUNS:-10}
REPEAT=${REPEAT:-5}
tidemark=$(built_tidemark)

bench_start
bench_many_tables_db
conf=$dir/status
mkdir -p "$conf/pipelines"
bench_many_tables_daemon_file "$conf/tidemark.yaml" "$(free_port)"
bench_many_pipelines "$conf/pipelines" "$TABLES" "0 0 1 1 *"
"$tidemark" migrate --config "$conf/tidemark.yaml" >/dev/null
psql -X -q -v ON_ERROR_STOP=1 -d bench <<SQL
insert into tidemark.watermarks (pipeline, table_name, value, value_type, moved_at, updated_at)
select 'p' || (1 + (g - 1) / 100), 't' || (1 + (g - 1) % 100),
       to_char((now() - case when g % 10 = 0 then interval '2 days' else interval '1 minute' end)
               at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
       'timestamptz', now(), now()
from generate_series(1, $TABLES) g;
insert into tidemark.runs (pipeline, table_name, trigger, status, started_at, finished_at, rows_read, rows_written,
                           error, error_kind)
select 'p' || (1 + (g - 1) / 100), 't' || (1 + (g - 1) % 100), 'schedule',
       case when g % 100 = 0 and r = $RUNS then 'failed' else 'success' end,
       now() - (($RUNS - r) * interval '1 minute'), now() - (($RUNS - r) * interval '1 minute') + interval '1 second',
       1, 1, case when g % 100 = 0 and r = $RUNS then 'connection refused' end,
       case when g % 100 = 0 and r = $RUNS then 'transient' end
from generate_series(1, $TABLES) g, generate_series(1, $RUNS) r;
insert into tidemark.pauses (pipeline, table_name, reason, paused_by)
select 'p' || (1 + (g - 1) / 100), 't' || (1 + (g - 1) % 100), 'bench', 'bench'
from generate_series(1, $TABLES) g where g % 1000 = 0;
analyze;
SQL

# time_status ARGS...: the median seconds of REPEAT runs, and the lines printed.
time_status() {
  local times=() start lines
  for _ in $(seq "$REPEAT"); do
    start=$EPOCHREALTIME
    lines=$("$tidemark" status "$@" --config "$conf/tidemark.yaml" | wc -l)
    times+=("$(seconds_since "$start")")
  done
  printf '%-34s %8s s %7s lines\n' "status $*" "$(median "${times[@]}")" "$lines"
}
echo "$TABLES tables, $((TABLES * RUNS)) runs; medians of $REPEAT"
time_status
time_status --stale
time_status --stale --json
time_status --failing
time_status --paused
time_status p1 --table 't1*'
