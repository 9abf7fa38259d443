#!/usr/bin/env bash
# tidemark serve end to end, against the throwaway PostgreSQL scripts/test
# started: it fires every second, serves every SPEC metric, reloads on
# SIGHUP (keeping the old configuration when the new one is invalid),
# drops a removed table's series, tells systemd READY, WATCHDOG, RELOADING
# and STOPPING, stops on SIGTERM with exit 0 — and a real
# Prometheus scraping it answers every query of the Grafana dashboard.
# Usage: serve_test.sh TIDEMARK_BINARY SOURCE_DIR
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
source "$(dirname "$0")/lib.sh"
tidemark=$1
root=$2
test_setup serve
psql -X -q -v ON_ERROR_STOP=1 -d "${db}_source" -c \
  "create table orders (id int primary key, updated_at timestamptz not null default clock_timestamp());
   insert into orders select g, clock_timestamp() - interval '1 hour' from generate_series(1, 100) g"
psql -X -q -v ON_ERROR_STOP=1 -d "${db}_target" -c \
  "create table orders (id int primary key, updated_at timestamptz not null);
   create table orders_copy (id int primary key, updated_at timestamptz not null)"

metrics_port=$(free_port)
mkdir -p "$work/pipelines"
dsn() { echo "host=$PGHOST port=$PGPORT dbname=$1"; }
cat >"$work/tidemark.yaml" <<YAML
state: target
connections:
  source: { dsn: "$(dsn "${db}_source")" }
  target: { dsn: "$(dsn "${db}_target")" }
metrics: { listen: "127.0.0.1:$metrics_port" }
shutdown_grace: 5s
log: { level: info, format: json }
YAML
pipeline() {  # pipeline TABLE...: a pipeline file loading orders into each target table
  echo 'pipeline: shop'
  echo 'source: source'
  echo 'target: target'
  echo 'schedule: "* * * * * *"'
  echo 'stale_after: 1h'
  echo 'tables:'
  local t
  for t in "$@"; do
    echo "  - { name: $t, source_table: orders, target_table: $t, key: [id], cursor: updated_at, lookback: 1m }"
  done
}
pipeline orders >"$work/pipelines/shop.yaml"

# A stand-in for systemd's notify socket records what the daemon tells it.
python3 - "$work/notify.sock" "$work/notify.log" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a", buffering=1) as log:
    while True:
        log.write(s.recv(4096).decode() + "\n---\n")
PY
pids+=("$!")
eventually 10 test -S "$work/notify.sock"

started=$EPOCHREALTIME
NOTIFY_SOCKET="$work/notify.sock" WATCHDOG_USEC=1000000 \
  "$tidemark" serve --config "$work/tidemark.yaml" >"$work/serve.log" 2>&1 &
serve=$!
pids+=("$serve")
metrics() { curl -sf "http://127.0.0.1:$metrics_port/metrics"; }
value() {  # value SERIES: the sample of one series, exactly as written in the scrape
  metrics | awk -v s="$1" '$1 == s { print $2 }'
}
runs_ok() { [ "$(value 'tidemark_runs_total{pipeline="shop",status="success",table="orders"}')" -ge "${1:-2}" ] 2>/dev/null; }

serving() { metrics >/dev/null; }
check "metrics are served" eventually 20 serving
check "the table fires every second" eventually 20 runs_ok 2
# Alone in its fleet, the daemon fires at once: no other member's lease
# can be live, so it has no one to wait for.
first_run_after() {
  psql -X -At -d "${db}_target" -c "select extract(epoch from min(started_at)) - $started from tidemark.runs"
}
check "alone, the first firing comes within 2 s of start ($(first_run_after) s)" \
  awk -v g="$(first_run_after)" 'BEGIN { exit !(g <= 2) }'
for name in tidemark_watermark_timestamp_seconds tidemark_watermark_age_seconds \
  tidemark_watermark_last_moved_timestamp_seconds tidemark_watermark_stale tidemark_watermark_stale_after_seconds \
  tidemark_last_run_rows tidemark_rows_written_total tidemark_runs_total tidemark_runs_skipped_total \
  tidemark_run_duration_seconds_bucket tidemark_last_run_duration_seconds tidemark_last_success_timestamp_seconds \
  tidemark_run_in_progress tidemark_run_start_delay_seconds_bucket tidemark_config_last_reload_successful \
  tidemark_db_up tidemark_build_info tidemark_state_bytes tidemark_fleet_members tidemark_tables_owned \
  tidemark_ownership_changes_total tidemark_table_paused tidemark_run_rows_in_progress \
  tidemark_run_progress_ratio; do
  check "metric $name" eventually 20 bash -c "curl -sf http://127.0.0.1:$metrics_port/metrics | grep -q '^$name'"
done
state_sized() { [ "$(value tidemark_state_bytes)" -gt 65536 ] 2>/dev/null; }
check "tidemark_state_bytes measures the state schema" state_sized
check "a fleet of one: this member sees itself" test "$(value tidemark_fleet_members)" = 1
check "a fleet of one: it owns its one table" test "$(value tidemark_tables_owned)" = 1
loaded() { [ "$(psql -X -At -d "${db}_target" -c "select count(*) from $1")" = "$2" ]; }
check "the first load arrives" eventually 20 loaded orders 100
psql -X -q -d "${db}_source" -c "insert into orders values (101)"
check "a new source row arrives" eventually 20 loaded orders 101
told() { grep -q "^$1" "$work/notify.log"; }
check "systemd hears READY=1" eventually 10 told READY=1
check "systemd hears WATCHDOG=1" eventually 10 told WATCHDOG=1
check "the json log is one object per line" bash -c "head -n 3 '$work/serve.log' | jq -e .message >/dev/null"

# A real Prometheus scraping the daemon answers every dashboard query.
prometheus_with_rules "$metrics_port" "$root/config/prometheus/tidemark-alerts.yml"
scraped() { query 'up{job="tidemark"} == 1' | jq -e '.data.result | length == 1' >/dev/null; }
check "prometheus scrapes the daemon" eventually 30 scraped
# rate() and increase() need a few samples in their window: wait until
# Prometheus holds five scrapes.
sampled() { query 'count_over_time(up{job="tidemark"}[1m]) >= 5' | jq -e '.data.result | length == 1' >/dev/null; }
check "prometheus holds a few scrapes" eventually 30 sampled
while IFS= read -r expr; do
  expr=${expr//\$pipeline/.*}
  expr=${expr//\$__rate_interval/1m}
  answers() { query "$expr" | jq -e '.status == "success" and (.data.result | length) > 0' >/dev/null; }
  check "dashboard query: $expr" eventually 15 answers
done < <(jq -r '.panels[] | .targets[]? | .expr' "$root/config/grafana/tidemark.json")
# Every rule of the shipped file, however many it holds.
rules=$(grep -c -- '- alert:' "$root/config/prometheus/tidemark-alerts.yml")
check "the alert rules load in prometheus ($rules)" bash -c \
  "curl -sf http://127.0.0.1:$prometheus_port/api/v1/rules | jq -e '[.data.groups[].rules[]] | length == $rules' >/dev/null"

# SIGHUP: an invalid configuration is rejected and the old one stays.
echo "pipeline: [" >"$work/pipelines/broken.yaml"
kill -HUP "$serve"
reload_is() { [ "$(value tidemark_config_last_reload_successful)" = "$1" ]; }
check "an invalid reload is reported" eventually 10 reload_is 0
before=$(value 'tidemark_runs_total{pipeline="shop",status="success",table="orders"}')
check "runs go on after an invalid reload" eventually 10 runs_ok $((before + 2))
rm "$work/pipelines/broken.yaml"

# SIGHUP: a valid configuration adds a table with all its series at once.
pipeline orders orders_copy >"$work/pipelines/shop.yaml"
kill -HUP "$serve"
check "a valid reload is reported" eventually 10 reload_is 1
check "systemd hears RELOADING=1" eventually 10 told RELOADING=1
check "the new table's series exist" eventually 10 bash -c \
  "curl -sf http://127.0.0.1:$metrics_port/metrics | grep -q 'tidemark_runs_skipped_total{pipeline=\"shop\",reason=\"overrun\",table=\"orders_copy\"} 0'"
check "the new table loads" eventually 20 loaded orders_copy 101

# SIGHUP: removing it drops its series.
pipeline orders >"$work/pipelines/shop.yaml"
kill -HUP "$serve"
gone() { ! metrics | grep -q 'table="orders_copy"'; }
check "a removed table loses its series" eventually 10 gone

# SIGTERM: stops firing, lets runs finish, exits 0.
kill -TERM "$serve"
status=0
wait "$serve" || status=$?
check "SIGTERM exits 0" test "$status" -eq 0
check "systemd hears STOPPING=1" told STOPPING=1
check "the log says it stopped" grep -q '"message":"stopped"' "$work/serve.log"

# Overruns: a run that takes seconds, fired every second.
# Every read of the view sleeps, whatever rows the window holds (a join
# with the sleep could skip it for an empty window, and the runs that
# should hold the worker would not).
psql -X -q -v ON_ERROR_STOP=1 -d "${db}_source" \
  -c "create function slow_rows() returns setof orders language sql as \$\$ select pg_sleep(1.5); select * from orders \$\$" \
  -c "create view slow_orders as select id, updated_at from slow_rows()"
psql -X -q -v ON_ERROR_STOP=1 -d "${db}_target" -c "create table slow_copy (id int primary key, updated_at timestamptz not null)"
slow_table="  - { name: slow, source_table: slow_orders, target_table: slow_copy, key: [id], cursor: updated_at }"
skipped() { [ "$(value "tidemark_runs_skipped_total{pipeline=\"shop\",reason=\"$1\",table=\"$2\"}")" -ge 1 ] 2>/dev/null; }
busy_daemon() {  # busy_daemon MAX_CONCURRENT_RUNS: starts a daemon on the current pipeline file
  metrics_port=$(free_port)
  sed -e "s/127.0.0.1:[0-9]*/127.0.0.1:$metrics_port/" -e "s/^shutdown_grace: .*/max_concurrent_runs: $1\nshutdown_grace: 5s/" \
    "$work/tidemark.yaml" >"$work/busy.yaml"
  "$tidemark" serve --config "$work/busy.yaml" >>"$work/busy.log" 2>&1 &
  busy=$!
  pids+=("$busy")
}
stop_busy() {
  kill -TERM "$busy"
  local status=0
  wait "$busy" || status=$?
  check "SIGTERM with a run in flight still exits 0" test "$status" -eq 0
}
{ echo 'pipeline: shop'; echo 'source: source'; echo 'target: target'; echo 'schedule: "* * * * * *"'
  echo 'tables:'; echo "$slow_table"; } >"$work/pipelines/shop.yaml"
busy_daemon 4
check "a firing during its own run is skipped as an overrun" eventually 20 skipped overrun slow
stop_busy

# The global bound: one worker, two tables firing in the same second. The
# firing that finds the worker busy waits for it; none is dropped.
{ pipeline orders; echo "$slow_table"; } >"$work/pipelines/shop.yaml"
busy_daemon 1
queued() { [ "$(value tidemark_runs_queued)" -ge 1 ] 2>/dev/null; }
check "a firing beyond max_concurrent_runs waits in the queue" eventually 20 queued
ran_after_waiting() {
  [ "$(value 'tidemark_runs_total{pipeline="shop",status="success",table="orders"}')" -ge 1 ] 2>/dev/null &&
    [ "$(value 'tidemark_runs_total{pipeline="shop",status="success",table="slow"}')" -ge 1 ] 2>/dev/null
}
check "both tables run on one worker" eventually 30 ran_after_waiting
check "no firing is dropped for lack of a worker" bash -c "! curl -sf http://127.0.0.1:$metrics_port/metrics | grep -q 'reason=\"concurrency\"'"
delayed() {
  metrics | awk '/^tidemark_run_start_delay_seconds_sum\{pipeline="shop"\}/ { found = $2 > 0.5 } END { exit !found }'
}
check "the wait shows in tidemark_run_start_delay_seconds" eventually 20 delayed
stop_busy

# Range helpers take free places of max_concurrent_runs, never more: a
# ranged first load on three workers gets none with one place (its run
# holds it), and its helpers with three.
psql -X -q -v ON_ERROR_STOP=1 -d "${db}_source" \
  -c "create table ledger (id bigint primary key, note text); insert into ledger select i, 'note ' || i
      from generate_series(1, 20000) i"
psql -X -q -v ON_ERROR_STOP=1 -d "${db}_target" -c "create table ledger (id bigint primary key, note text)"
{ echo 'pipeline: shop'; echo 'source: source'; echo 'target: target'; echo 'schedule: "* * * * * *"'
  echo 'tables:'
  echo "  - { name: ledger, mode: snapshot, source_table: ledger, target_table: ledger, key: [id],"
  echo "      ranges: { above: 0B, size: 64kB, workers: 3 } }"
} >"$work/pipelines/shop.yaml"
ledger_loaded() {
  [ "$(psql -X -At -d "${db}_target" -c "select count(*) from tidemark.watermarks where table_name = 'ledger'")" = 1 ]
}
for places in 1 3; do
  : >"$work/busy.log"
  psql -X -q -d "${db}_target" -c "truncate ledger" -c "delete from tidemark.watermarks where table_name = 'ledger'"
  busy_daemon "$places"
  check "a ranged first load under serve with $places places" eventually 30 ledger_loaded
  kill -0 "$busy" 2>/dev/null || { echo "--- the daemon ended:" >&2; tail -30 "$work/busy.log" >&2; }
  stop_busy
  check "... went by ranges" grep -q 'shop.ledger: success run .*first load in [0-9]* ranges' "$work/busy.log"
  if [ "$places" = 1 ]; then
    check "... with no helper: its run holds the one place" bash -c "! grep -q 'range helper' '$work/busy.log'"
  else
    check "... with helpers joining in the places left" grep -q 'shop.ledger: range helper [12] committed' "$work/busy.log"
  fi
done
check "... and the target is the source" test \
  "$(psql -X -At -d "${db}_target" -c "select md5(string_agg(id || note, ',' order by id)) from ledger")" = \
  "$(psql -X -At -d "${db}_source" -c "select md5(string_agg(id || note, ',' order by id)) from ledger")"

# 100 tables that fire in the same second, default max_concurrent_runs (4):
# every one of them runs at every firing it gets.
many=()
for i in $(seq 1 100); do many+=("t$i"); done
for t in "${many[@]}"; do echo "create table $t (id int primary key, updated_at timestamptz not null);"; done |
  psql -X -q -v ON_ERROR_STOP=1 -d "${db}_target"
{ echo 'pipeline: shop'; echo 'source: source'; echo 'target: target'; echo 'schedule: "*/5 * * * * *"'
  echo 'stale_after: 1h'; echo 'tables:'
  for t in "${many[@]}"; do
    echo "  - { name: $t, source_table: orders, target_table: $t, key: [id], cursor: updated_at, lookback: 1m }"
  done
} >"$work/pipelines/shop.yaml"
metrics_port=$(free_port)
sed -e "s/127.0.0.1:[0-9]*/127.0.0.1:$metrics_port/" -e "s/^shutdown_grace: .*/shutdown_grace: 5s/" \
  "$work/tidemark.yaml" >"$work/busy.yaml"
"$tidemark" serve --config "$work/busy.yaml" >>"$work/busy.log" 2>&1 &
busy=$!
pids+=("$busy")
every_table_ran_twice() {
  [ "$(psql -X -At -d "${db}_target" -c "select count(*) from (select table_name from tidemark.runs
        where pipeline = 'shop' and table_name like 't%' and status = 'success' group by 1 having count(*) >= 2) t")" = 100 ]
}
check "100 coinciding tables on 4 workers: every one runs at every firing" eventually 30 every_table_ran_twice
check "none of them was skipped" bash -c "! curl -sf http://127.0.0.1:$metrics_port/metrics |
  grep -E '^tidemark_runs_skipped_total.*table=\"t[0-9]+\"' | grep -qv ' 0$'"
stop_busy

# A source table that does not exist is a permanent failure: labelled so in
# tidemark_runs_total and in the run's log line, and never retried (a
# transient one would be, 10 s later, before the next firing 30 s later).
{ echo 'pipeline: shop'; echo 'source: source'; echo 'target: target'; echo 'schedule: "*/30 * * * * *"'
  echo 'tables:'
  echo "  - { name: missing, source_table: no_such_table, target_table: orders_copy, key: [id], cursor: updated_at }"
} >"$work/pipelines/shop.yaml"
busy_daemon 2
failed_permanently() {
  [ "$(value 'tidemark_runs_total{error="permanent",pipeline="shop",status="failed",table="missing"}')" -ge 1 ] 2>/dev/null
}
check "a run against a missing source table fails permanently" eventually 40 failed_permanently
check "its log line says permanent" grep -q 'shop.missing: failed (permanent)' "$work/busy.log"
# The scheduler's decision, as it says it (core's scheduler tests show it
# arms no retry then), rather than 12 s of watching for a retry.
check "the scheduler says the failure is not retried" eventually 10 \
  grep -q 'shop.missing: the failure is permanent and is not retried' "$work/busy.log"
check "no retry ran" bash -c "psql -X -At -d '${db}_target' -c \"select count(*) > 0 and
  count(*) filter (where trigger = 'retry') = 0 from tidemark.runs where table_name = 'missing'\" | grep -q t"
stop_busy

# A database that is down: runs fail and are retried, the daemon keeps
# serving, and tidemark_db_up says which connection is down.
pipeline orders >"$work/pipelines/shop.yaml"
sed -i "s|source: { dsn: \"[^\"]*\" }|source: { dsn: \"host=$work/nowhere dbname=x connect_timeout=2\" }|" "$work/tidemark.yaml"
busy_daemon 2
failing() { [ "$(value 'tidemark_runs_total{error="transient",pipeline="shop",status="failed",table="orders"}')" -ge 2 ] 2>/dev/null; }
check "runs against a database that is down fail (transient) and are retried" eventually 20 failing
source_down() { [ "$(value 'tidemark_db_up{connection="source"}')" = "0" ]; }
check "tidemark_db_up reports the connection that is down" eventually 30 source_down
check "the daemon keeps running" kill -0 "$busy"
check "the failed run is recorded with its error" bash -c \
  "psql -X -At -d '${db}_target' -c \"select count(*) > 0 from tidemark.runs where status = 'failed' and error like 'cannot connect to source%'\" | grep -q t"
stop_busy

if [ "$failed" -gt 0 ]; then
  echo "--- serve log (tail) ---" >&2
  tail -n 30 "$work/serve.log" >&2
  [ -f "$work/busy.log" ] && tail -n 20 "$work/busy.log" >&2
fi
report
