#!/usr/bin/env bash
# A foreground `tidemark run` stopped by SIGTERM or Ctrl-C (SIGINT) in the
# middle of a COPY ends its run the normal way: the load rolls back, the
# run row is closed as failed with the signal in its error, and the
# process exits 1. No run row is left `running` for a later run to call
# abandoned.
# Usage: run_signal_test.sh TIDEMARK_BINARY
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
source "$(dirname "$0")/lib.sh"
tidemark=$1
test_setup signal

# A source whose rows come out slowly: 10 ms each, so a run's COPY of
# 2000 rows takes 20 s and the signal lands inside it. (`initial` spares
# the run a min() over the slow view before it.)
psql -X -q -v ON_ERROR_STOP=1 -d "${db}_source" <<'SQL'
create table orders (id bigint primary key, updated_at timestamptz not null);
insert into orders select g, timestamptz '2026-01-01' + g * interval '1 minute' from generate_series(1, 2000) g;
create function slowly(id bigint) returns bigint language plpgsql volatile as
  $$ begin perform pg_sleep(0.01); return id; end $$;
create view orders_slow as select slowly(o.id) as id, o.updated_at from orders o;
SQL
psql -X -q -v ON_ERROR_STOP=1 -d "${db}_target" -c \
  "create table orders (id bigint primary key, updated_at timestamptz not null)"

daemon_config warn
cat >"$work/pipelines/slow.yaml" <<'YAML'
pipeline: slow
source: source
target: target
schedule: "@daily"
tables:
  - { name: orders, source_table: orders_slow, target_table: orders, key: [id], cursor: updated_at,
      initial: "2026-01-01T00:00:00Z" }
YAML

target_sql() { psql -X -At -d "${db}_target" -c "$1"; }
copy_running() {
  [ "$(psql -X -At -d "${db}_source" -c "select count(*) from pg_stat_activity
        where datname = current_database() and state = 'active' and pid <> pg_backend_pid()
          and query like '%COPY (%orders_slow%'")" = 1 ]
}

# run_stopped_by SIGNAL: starts a run, sends SIGNAL once its COPY is
# streaming, and sets $rc to the run's exit code.
run_stopped_by() {
  "$tidemark" run slow --config "$work/tidemark.yaml" >"$work/run-$1.out" 2>&1 &
  local run=$!
  pids+=("$run")
  if ! eventually 30 copy_running; then
    echo "the run's COPY never started" >&2
    cat "$work/run-$1.out" >&2
  fi
  kill -s "$1" "$run"
  # The run notices between rows; give it a few seconds, then give up.
  local deadline=$((SECONDS + 15))
  while kill -0 "$run" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
  kill -9 "$run" 2>/dev/null || true
  rc=0
  wait "$run" || rc=$?
}

for signal in TERM INT; do
  run_stopped_by "$signal"
  check "SIG$signal: tidemark run exits 1 (got $rc)" test "$rc" -eq 1
  last_run=$(target_sql "select status || ': ' || error from tidemark.runs order by run_id desc limit 1")
  check "SIG$signal: the run row is failed, cancelled by SIG$signal (got: $last_run)" \
    test "${last_run#"failed: cancelled by SIG$signal"}" != "$last_run"
  check "SIG$signal: the output says so" grep -q "cancelled by SIG$signal" "$work/run-$signal.out"
  check "SIG$signal: no run row is left running" test "$(target_sql "select count(*) from tidemark.runs where status = 'running'")" = 0
  check "SIG$signal: the load rolled back" test "$(target_sql "select count(*) from orders")" = 0
done
check "no run was left for a later one to call abandoned" \
  test "$(target_sql "select count(*) from tidemark.runs where error like 'abandoned%'")" = 0
check "the watermark did not move" test "$(target_sql "select count(*) from tidemark.watermarks")" = 0
report
