#!/usr/bin/env bash
# Batches under concurrent writers: 30 tables on one schedule, one worker
# (max_concurrent_runs: 1), so that the firings wait and a worker takes
# them along as a batch (core/run/load_batch.h). pgbench writes the first
# ten tables, in transactions that stamp updated_at with now() (their
# start) and think before writing, so that rows commit behind the clock;
# the other twenty stay quiet, and their runs are done in batches. The
# checks: batches formed and recorded runs that moved the quiet tables'
# watermarks; no run failed; no source row below any stored watermark is
# missing from the target; no advisory lock outlives the daemon; after a
# last `tidemark run` every target equals its source.
# Usage: batch_load_test.sh TIDEMARK_BINARY
#   BATCH_LOAD_SECONDS  how long pgbench writes (default 15)
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
source "$(dirname "$0")/lib.sh"
# shellcheck source=../../scripts/lib/common.sh
source "$(dirname "$0")/../../scripts/lib/common.sh"
tidemark=$1
load_seconds=${BATCH_LOAD_SECONDS:-15}
tables=30
written=10
pgbench=$(pg_bin)/pgbench
[ -x "$pgbench" ] || pgbench=$(command -v pgbench) || { echo "pgbench not found" >&2; exit 1; }
test_setup batch

sql() { PGTZ=UTC psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
ddl="(id bigserial primary key, v int not null default 0, updated_at timestamptz not null default now())"
sql -d "${db}_source" -c "do \$\$ begin for i in 1..$tables loop
    execute format('create table %I $ddl', 't' || i);
    execute format('insert into %I (v) select 0 from generate_series(1, 5)', 't' || i);
  end loop; end \$\$" -c "create function write_row(k int) returns void language plpgsql as \$\$
  begin execute format('insert into %I (v) values (1)', 't' || k); end \$\$"
sql -d "${db}_target" -c "do \$\$ begin for i in 1..$tables loop
    execute format('create table %I (id bigint primary key, v int not null, updated_at timestamptz not null)', 't' || i);
  end loop; end \$\$"

cat >"$work/write.sql" <<SQL
\set k random(1, $written)
\set think random(0, 1500)
BEGIN;
\sleep :think ms
SELECT write_row(:k);
COMMIT;
SQL

daemon_config info
echo "max_concurrent_runs: 1" >>"$work/tidemark.yaml"
{
  printf 'pipeline: batch\nsource: source\ntarget: target\nschedule: "* * * * * *"\ntables:\n'
  for ((i = 1; i <= tables; i++)); do
    printf '  - { name: t%d, source_table: t%d, target_table: t%d, key: [id], cursor: updated_at }\n' "$i" "$i" "$i"
  done
} >"$work/pipelines/batch.yaml"

"$tidemark" serve --config "$work/tidemark.yaml" >"$work/serve.log" 2>&1 &
serve=$!
pids+=("$serve")
first_runs_done() {
  [ "$(sql -d "${db}_target" -c "select count(distinct table_name) from tidemark.runs
                                 where pipeline = 'batch' and status = 'success'" 2>/dev/null)" = "$tables" ]
}
check "every table has a first successful run before the load" eventually 40 first_runs_done

"$pgbench" -n -c 6 -j 6 -T "$load_seconds" -f "$work/write.sql" "${db}_source" >"$work/pgbench.log" 2>&1 &
writer=$!
pids+=("$writer")
check "pgbench wrote without errors" wait "$writer"
echo "pgbench: $(grep -h 'transactions actually processed' "$work/pgbench.log" || echo '? transactions')"
# A last firing of every table after the writers are done.
writers_done=$(sql -d "${db}_target" -c "select now()")
ran_after_writers() {
  [ "$(sql -d "${db}_target" -c "select count(distinct table_name) from tidemark.runs where pipeline = 'batch'
                                 and status = 'success' and started_at > '$writers_done'")" = "$tables" ]
}
check "every table runs once more after the writers are done" eventually 30 ran_after_writers

stop_serve "$serve"
# Only this test's databases: tests beside it on the same server hold their own.
locks=$(sql -d postgres -c "select count(*) from pg_locks where locktype = 'advisory'
                            and database in (select oid from pg_database where datname like '${db}\_%')")
check "no advisory lock outlives the daemon" test "$locks" -eq 0

batched=$(grep -c "(in a batch of" "$work/serve.log" || true)
echo "runs done in a batch: $batched"
check "batches formed and finished runs" test "$batched" -ge 50
IFS='|' read -r failed_runs quiet_moved < <(sql -d "${db}_target" -c "
  select count(*) filter (where status <> 'success'),
         count(*) filter (where status = 'success' and rows_read = 0 and watermark_after is distinct from watermark_before
                          and table_name not in (select 't' || g from generate_series(1, $written) g))
  from tidemark.runs where pipeline = 'batch'")
echo "failed runs: $failed_runs; quiet tables' runs that moved their watermark: $quiet_moved"
check "no run failed" test "$failed_runs" -eq 0
check "the quiet tables' watermarks moved again and again" test "$quiet_moved" -ge 40
copied=$(sql -d "${db}_target" -c "select count(*) from tidemark.runs where pipeline = 'batch' and rows_written > 0
                                   and run_id > (select min(run_id) + $tables from tidemark.runs)")
check "the written tables' rows were loaded by runs of their own during the load" test "$copied" -ge 10

rows() { sql -d "$1" -c "select id || '|' || t::text from $2 t where ${3:-true}" | LC_ALL=C sort; }
for ((i = 1; i <= tables; i++)); do
  watermark=$(sql -d "${db}_target" -c "select value from tidemark.watermarks where pipeline = 'batch' and table_name = 't$i'")
  rows "${db}_source" "t$i" "updated_at < '${watermark:-epoch}'::timestamptz" >"$work/t$i.below"
  rows "${db}_target" "t$i" >"$work/t$i.target"
  LC_ALL=C comm -23 "$work/t$i.below" "$work/t$i.target" >"$work/t$i.lost"
  check "every source row of t$i below the watermark is already in the target" test ! -s "$work/t$i.lost"
done

run_status=0
"$tidemark" run batch --config "$work/tidemark.yaml" >"$work/run.log" 2>&1 || run_status=$?
check "a last tidemark run succeeds" test "$run_status" -eq 0
for ((i = 1; i <= tables; i++)); do
  summary="select count(*) || ' rows, md5 ' || coalesce(md5(string_agg(t::text, ',' order by id)), '-') from t$i t"
  check "the target's t$i equals the source's" test "$(sql -d "${db}_source" -c "$summary")" = \
    "$(sql -d "${db}_target" -c "$summary")"
done
report
