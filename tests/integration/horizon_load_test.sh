#!/usr/bin/env bash
# The safe horizon under concurrent writers (SPEC §3), with the default
# configuration: no lookback, no max_window. pgbench writes three source
# tables, one per way a cursor value is stamped before its row commits,
# in transactions that begin, think, write, think and commit:
#   now_rows      updated_at defaults to now(): stamped when the transaction
#                 began, long before it holds a transaction id; some
#                 transactions update an existing row the same way;
#   trigger_rows  a trigger stamps clock_timestamp() at the write;
#   id_rows       a bigserial id taken at the write, committed later than
#                 ids taken after it.
# tidemark serve copies them every second during the whole load. Then the
# stored watermark's claim is checked before anything else runs: every
# source row below it must already be in the target, as it is in the
# source. A last `tidemark run` follows, and the target must equal the
# source row for row.
# Usage: horizon_load_test.sh TIDEMARK_BINARY
#   HORIZON_LOAD_SECONDS  how long pgbench writes (default 18)
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
source "$(dirname "$0")/lib.sh"
# shellcheck source=../../scripts/lib/common.sh
source "$(dirname "$0")/../../scripts/lib/common.sh"
tidemark=$1
load_seconds=${HORIZON_LOAD_SECONDS:-18}
tables=(now_rows trigger_rows id_rows)
pgbench=$(pg_bin)/pgbench
[ -x "$pgbench" ] || pgbench=$(command -v pgbench) || { echo "pgbench not found" >&2; exit 1; }
test_setup horizon

# Row text is compared between the two databases: one time zone for both.
sql() { PGTZ=UTC psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }

sql -d "${db}_source" <<'SQL'
create table now_rows (id bigserial primary key, v int not null default 0,
                       updated_at timestamptz not null default now());
create table trigger_rows (id bigserial primary key, v int not null default 0,
                           updated_at timestamptz not null);
create function stamp_updated_at() returns trigger language plpgsql as $$
begin
  new.updated_at := clock_timestamp();
  return new;
end $$;
create trigger stamp before insert or update on trigger_rows
  for each row execute function stamp_updated_at();
create table id_rows (id bigserial primary key, v int not null);
-- Rows to update from the first transaction on, copied by the first runs.
insert into now_rows (v) select 0 from generate_series(1, 20);
insert into trigger_rows (v) select 0 from generate_series(1, 20);
insert into id_rows (v) select 0 from generate_series(1, 20);
SQL
sql -d "${db}_target" <<'SQL'
create table now_rows (id bigint primary key, v int not null, updated_at timestamptz not null);
create table trigger_rows (id bigint primary key, v int not null, updated_at timestamptz not null);
create table id_rows (id bigint primary key, v int not null);
SQL

# One pgbench script per table. Think times sit inside the transaction, so
# a run can read its horizon between the transaction's start, its write and
# its commit. Each pattern thinks longest where its cursor value goes stale:
# the time-stamped tables between the start (now()) and the write, id_rows
# between taking its id and committing. Had every transaction a long think
# after its write, an older transaction holding a transaction id would be
# open nearly all the time, and a horizon lowered to it would cover the
# younger now() transactions too: their gap would hardly ever be exercised.
# now_rows thinks up to 2.5 s before its write, past the horizon's one
# second margin (kStartReportMargin), so that only the open transaction's
# start, not the margin, keeps its rows above the watermark.
cat >"$work/now_rows.sql" <<'SQL'
\set think_before random(0, 2500)
\set think_after random(0, 50)
\set kind random(1, 4)
BEGIN;
\sleep :think_before ms
\if :kind = 1
UPDATE now_rows SET v = v + 1, updated_at = now()
 WHERE id = (SELECT floor(random() * max(id))::bigint + 1 FROM now_rows);
\else
INSERT INTO now_rows (v) VALUES (0);
\endif
\sleep :think_after ms
COMMIT;
SQL
cat >"$work/trigger_rows.sql" <<'SQL'
\set think_before random(0, 250)
\set think_after random(0, 50)
\set kind random(1, 4)
BEGIN;
\sleep :think_before ms
\if :kind = 1
UPDATE trigger_rows SET v = v + 1
 WHERE id = (SELECT floor(random() * max(id))::bigint + 1 FROM trigger_rows);
\else
INSERT INTO trigger_rows (v) VALUES (0);
\endif
\sleep :think_after ms
COMMIT;
SQL
cat >"$work/id_rows.sql" <<'SQL'
\set think_before random(0, 50)
\set think_after random(0, 250)
BEGIN;
\sleep :think_before ms
INSERT INTO id_rows (v) VALUES (:think_after);
\sleep :think_after ms
COMMIT;
SQL

daemon_config info
# The defaults under test: no lookback, no max_window.
cat >"$work/pipelines/horizon.yaml" <<'YAML'
pipeline: horizon
source: source
target: target
schedule: "* * * * * *"
tables:
  - { name: now_rows, source_table: now_rows, target_table: now_rows, key: [id], cursor: updated_at }
  - { name: trigger_rows, source_table: trigger_rows, target_table: trigger_rows, key: [id], cursor: updated_at }
  - { name: id_rows, source_table: id_rows, target_table: id_rows, key: [id], cursor: id }
YAML

"$tidemark" serve --config "$work/tidemark.yaml" >"$work/serve.log" 2>&1 &
serve=$!
pids+=("$serve")
first_runs_done() {
  [ "$(sql -d "${db}_target" -c "select count(distinct table_name) from tidemark.runs
                                 where pipeline = 'horizon' and status = 'success'" 2>/dev/null)" = 3 ]
}
check "every table has a first successful run before the load" eventually 20 first_runs_done

writers=()
for table in "${tables[@]}"; do
  clients=3
  [ "$table" = now_rows ] && clients=8  # its transactions last ten times longer
  "$pgbench" -n -c "$clients" -j "$clients" -T "$load_seconds" -f "$work/$table.sql" "${db}_source" >"$work/pgbench-$table.log" 2>&1 &
  writers+=("$!")
  pids+=("$!")
done
for i in "${!tables[@]}"; do
  check "pgbench wrote ${tables[$i]} without errors" wait "${writers[$i]}"
  echo "${tables[$i]}: $(grep -h 'transactions actually processed' "$work/pgbench-${tables[$i]}.log" || echo '? transactions')"
done
# A last firing of every table after the writers are done.
writers_done=$(sql -d "${db}_target" -c "select now()")
ran_after_writers() {
  [ "$(sql -d "${db}_target" -c "select count(distinct table_name) from tidemark.runs where pipeline = 'horizon'
                                 and status = 'success' and started_at > '$writers_done'")" = 3 ]
}
check "every table runs once more after the writers are done" eventually 20 ran_after_writers

stop_serve "$serve"

# The daemon did the copying, so the claims below are about its runs: many
# runs per table wrote rows and moved the watermark.
for table in "${tables[@]}"; do
  IFS='|' read -r succeeded failed_runs moved copied < <(sql -d "${db}_target" -c "
    select count(*) filter (where status = 'success'), count(*) filter (where status = 'failed'),
           count(*) filter (where status = 'success' and watermark_after is distinct from watermark_before),
           count(*) filter (where status = 'success' and rows_written > 0)
    from tidemark.runs where pipeline = 'horizon' and table_name = '$table'")
  echo "$table: $succeeded successful runs ($moved moved the watermark, $copied wrote rows), $failed_runs failed"
  # How far the open transactions held hi below the source clock: the
  # figures docs/engine.md quotes.
  sql -d "${db}_target" -c "
    select '$table: horizon lag median ' || round(percentile_cont(0.5) within group (order by horizon_lag_seconds)::numeric, 3)
           || ' s, p95 ' || round(percentile_cont(0.95) within group (order by horizon_lag_seconds)::numeric, 3)
           || ' s, max ' || round(max(horizon_lag_seconds)::numeric, 3) || ' s'
    from tidemark.runs where pipeline = 'horizon' and table_name = '$table' and status = 'success'"
  check "serve moved the watermark of $table again and again during the load" test "$moved" -ge 5
  check "serve wrote rows of $table again and again during the load" test "$copied" -ge 5
done

# rows DATABASE TABLE [CONDITION]: one "id|row" line per row, sorted as text
# for comm.
rows() { sql -d "$1" -c "select id || '|' || t::text from $2 t where ${3:-true}" | LC_ALL=C sort; }

# The claim, before any other run: no source row below the stored
# watermark is missing from the target or held there in an older version.
for table in "${tables[@]}"; do
  watermark=$(sql -d "${db}_target" -c "select value from tidemark.watermarks
                                       where pipeline = 'horizon' and table_name = '$table'")
  if [ "$table" = id_rows ]; then below="id < ${watermark:-0}"; else below="updated_at < '${watermark:-epoch}'::timestamptz"; fi
  rows "${db}_source" "$table" "$below" >"$work/$table.source-below"
  rows "${db}_target" "$table" >"$work/$table.target-before"
  LC_ALL=C comm -23 "$work/$table.source-below" "$work/$table.target-before" | cut -d'|' -f1 >"$work/$table.lost"
  cut -d'|' -f1 "$work/$table.target-before" | LC_ALL=C sort >"$work/$table.target-keys"
  absent=$(LC_ALL=C sort "$work/$table.lost" | LC_ALL=C comm -23 - "$work/$table.target-keys" | wc -l)
  stale=$(($(wc -l <"$work/$table.lost") - absent))
  echo "$table: watermark $watermark; $(wc -l <"$work/$table.source-below") source rows below it," \
       "$absent missing from the target, $stale there in an older version"
  check "every source row of $table below the watermark is already in the target" test ! -s "$work/$table.lost"
  if [ -s "$work/$table.lost" ]; then echo "  keys: $(sort -n "$work/$table.lost" | head -20 | tr '\n' ' ')" >&2; fi
done

run_status=0
"$tidemark" run horizon --config "$work/tidemark.yaml" >"$work/run.log" 2>&1 || run_status=$?
check "a last tidemark run succeeds" test "$run_status" -eq 0

# Row for row: every source row in the target, nothing else.
for table in "${tables[@]}"; do
  summary="select count(*) || ' rows, md5 ' || coalesce(md5(string_agg(t::text, ',' order by id)), '-') from $table t"
  source_summary=$(sql -d "${db}_source" -c "$summary")
  target_summary=$(sql -d "${db}_target" -c "$summary")
  echo "$table: source $source_summary; target $target_summary"
  check "the target's $table equals the source's" test "$source_summary" = "$target_summary"
  if [ "$source_summary" != "$target_summary" ]; then
    rows "${db}_source" "$table" >"$work/$table.source"
    rows "${db}_target" "$table" >"$work/$table.target"
    echo "  rows only in the source or newer there: $(LC_ALL=C comm -23 "$work/$table.source" "$work/$table.target" |
                                                   cut -d'|' -f1 | sort -n | head -20 | tr '\n' ' ')" >&2
    echo "  rows only in the target or older there: $(LC_ALL=C comm -13 "$work/$table.source" "$work/$table.target" |
                                                   cut -d'|' -f1 | sort -n | head -20 | tr '\n' ' ')" >&2
  fi
done
report
