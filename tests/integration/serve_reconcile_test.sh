#!/usr/bin/env bash
# tidemark serve reconciles a table with deletes: on its own schedule:
# rows deleted in the source leave the target, a row removed from the
# target below the watermark comes back, the reconcile gauges say how
# many, the run rows say it was a reconcile, a failing reconcile says so
# (gauge, status), and after a restart the gauges come back from the state.
# Usage: serve_reconcile_test.sh TIDEMARK_BINARY
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
source "$(dirname "$0")/lib.sh"
tidemark=$1
test_setup serve_reconcile
orders_tables 1000
daemon_config info
metrics_port=$(sed -n 's/.*127.0.0.1:\([0-9]*\).*/\1/p' "$work/tidemark.yaml")
cat >"$work/pipelines/shop.yaml" <<'YAML'
pipeline: shop
source: source
target: target
schedule: "*/2 * * * * *"
tables:
  - name: orders
    source_table: orders
    target_table: orders
    key: [id]
    cursor: updated_at
    deletes: { reconcile: "*/3 * * * * *" }
YAML
target() { psql -X -At -d "${db}_target" -c "$1"; }
value() {  # value SERIES: its sample in the scrape
  curl -sf "http://127.0.0.1:$metrics_port/metrics" | awk -v s="$1" '$1 == s { print $2 }'
}
start_serve() {
  "$tidemark" serve --config "$work/tidemark.yaml" >>"$work/serve.log" 2>&1 &
  serve=$!
  pids+=("$serve")
}
start_serve
loaded() { [ "$(target 'select count(*) from orders')" = "1000" ]; }
check "the load runs" eventually 30 loaded

psql -X -q -d "${db}_source" -c "delete from orders where id <= 20"
target "delete from orders where id = 500" >/dev/null
deleted() { [ "$(target 'select count(*) from orders where id <= 20')" = "0" ]; }
check "rows deleted in the source leave the target on the reconcile's schedule" eventually 30 deleted
back() { [ "$(target 'select count(*) from orders where id = 500')" = "1" ]; }
check "a row missing below the watermark is copied again" eventually 30 back
gauge_missing() { [ "$(value 'tidemark_reconcile_missing_rows{pipeline="shop",table="orders"}')" = "1" ]; }
gauge_deleted() { [ "$(value 'tidemark_reconcile_deleted_rows{pipeline="shop",table="orders"}')" = "20" ]; }
recorded() {
  [ "$(target "select count(*) from tidemark.runs where trigger = 'reconcile' and rows_missing = 1")" = "1" ] &&
    [ "$(target "select count(*) from tidemark.runs where trigger = 'reconcile' and rows_deleted = 20")" -ge 1 ]
}
check "the reconciles are run rows with their counts" eventually 10 recorded
# The gauges hold the last reconcile's counts: a later one finds nothing.
zero() { [ "$(value 'tidemark_reconcile_missing_rows{pipeline="shop",table="orders"}')" = "0" ]; }
check "a later reconcile that finds nothing sets the gauges to 0" eventually 20 zero
check "the daemon logs each reconcile" grep -q 'shop.orders: reconcile success' "$work/serve.log"

# A reconcile that fails (here it refuses: the source holds no row, the
# target does) sets its gauge and says so in status, while loads go on.
psql -X -q -d "${db}_source" -c "delete from orders"
failing() { [ "$(value 'tidemark_reconcile_failed{pipeline="shop",table="orders"}')" = "1" ]; }
check "a failed reconcile sets tidemark_reconcile_failed" eventually 20 failing
why_failing() {
  "$tidemark" status --config "$work/tidemark.yaml" --json | grep -q '"reason": "reconcile_failing"'
}
check "status says reconcile_failing in WHY while the loads are fresh" eventually 10 why_failing

# After a restart (no reconcile due for a year now), the gauges come from the state.
kill -TERM "$serve"
wait "$serve" || true
target "delete from orders where id = 600" >/dev/null
sed -i 's|reconcile: "\*/3 \* \* \* \* \*"|reconcile: "0 0 1 1 *"|' "$work/pipelines/shop.yaml"
psql -X -q -d "${db}_target" -c "update tidemark.runs set rows_missing = 7 where run_id = (select max(run_id)
  from tidemark.runs where trigger = 'reconcile' and status = 'success')"
start_serve
restored() { [ "$(value 'tidemark_reconcile_missing_rows{pipeline="shop",table="orders"}')" = "7" ]; }
check "after a restart the gauges come back from the last reconcile's run row" eventually 15 restored
check "after a restart tidemark_reconcile_failed comes back from the latest reconcile" eventually 15 failing

# A reload that removes deletes: removes the reconcile: its last failure
# is no longer the table's, in the gauge (the alert) or in status.
sed -i '/deletes:/d' "$work/pipelines/shop.yaml"
kill -HUP "$serve"
not_failing() { [ "$(value 'tidemark_reconcile_failed{pipeline="shop",table="orders"}')" != "1" ]; }
check "regression: after a reload that removes deletes:, tidemark_reconcile_failed is not 1" eventually 15 not_failing
why_not_failing() {
  ! "$tidemark" status --config "$work/tidemark.yaml" --json | grep -q '"reason": "reconcile_failing"'
}
check "regression: without deletes:, status does not say reconcile_failing" eventually 5 why_not_failing
kill -TERM "$serve"
wait "$serve" || true

if [ "$failed" -gt 0 ]; then
  echo "--- serve log (tail) ---" >&2
  tail -n 30 "$work/serve.log" >&2
fi
report
