#!/usr/bin/env bash
# A foreground `tidemark run` stopped by SIGTERM or Ctrl-C (SIGINT) in the
# middle of a COPY ends its run the normal way: the load rolls back, the
# run row is closed as failed with the signal in its error, and the
# process exits 1. No run row is left `running` for a later run to call
# abandoned. So does one stopped while a long statement after the COPY
# runs on the target (a snapshot's delete), which the server then cancels.
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
# A snapshot whose delete of gone rows takes a minute on the target (a
# statement trigger that sleeps): SIGTERM must not wait for it.
psql -X -q -v ON_ERROR_STOP=1 -d "${db}_source" \
  -c "create table balances (id int primary key, amount int not null);
      insert into balances select g, g from generate_series(1, 100) g"
psql -X -q -v ON_ERROR_STOP=1 -d "${db}_target" <<'SQL'
create table balances (id int primary key, amount int not null);
insert into balances values (1000, 0);
create function sleepy() returns trigger language plpgsql as $$ begin perform pg_sleep(60); return null; end $$;
create trigger sleepy before delete on balances for each statement execute function sleepy();
SQL
cat >"$work/pipelines/snap.yaml" <<'YAML'
pipeline: snap
source: source
target: target
schedule: "@daily"
tables:
  - { name: balances, mode: snapshot, source_table: balances, target_table: balances, key: [id] }
YAML
delete_running() {
  [ "$(target_sql "select count(*) from pg_stat_activity where datname = current_database()
        and state = 'active' and query like 'DELETE FROM%balances%'")" = 1 ]
}
delete_gone() { ! delete_running; }
"$tidemark" run snap --config "$work/tidemark.yaml" >"$work/run-snap.out" 2>&1 &
run=$!
pids+=("$run")
if ! eventually 30 delete_running; then
  echo "FAILED: the snapshot's delete never started" >&2
  cat "$work/run-snap.out" >&2
  exit 1
fi
kill -s TERM "$run"
deadline=$((SECONDS + 10))
while kill -0 "$run" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
kill -9 "$run" 2>/dev/null || true
rc=0
wait "$run" || rc=$?
check "snapshot: SIGTERM during the target's delete exits 1 within 10 s (got $rc)" test "$rc" -eq 1
last_run=$(target_sql "select status || ': ' || error from tidemark.runs where pipeline = 'snap' order by run_id desc limit 1")
check "snapshot: the run row is failed, cancelled by SIGTERM (got: $last_run)" \
  test "${last_run#failed: *cancelled by SIGTERM}" != "$last_run"
check "snapshot: the server cancelled the delete" eventually 5 delete_gone
check "snapshot: the target rolled back" test "$(target_sql "select string_agg(id::text, ',') from balances")" = 1000

check "no run was left for a later one to call abandoned" \
  test "$(target_sql "select count(*) from tidemark.runs where error like 'abandoned%'")" = 0
check "the watermark did not move" test "$(target_sql "select count(*) from tidemark.watermarks")" = 0
report
