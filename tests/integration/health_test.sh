#!/usr/bin/env bash
# /healthz and /readyz of a running `tidemark serve`, for real: both answer
# 200 beside /metrics on the one port; /readyz goes 503 with its reason
# while the state database is stopped and back to 200 once it is up again,
# while /healthz stays 200; `tidemark healthcheck` exits by what they say;
# a port in use is a clear start-up error. The state database lives on a
# PostgreSQL server of this test's own, since the harness's server is shared
# with the tests running beside this one.
# Usage: health_test.sh TIDEMARK_BINARY SOURCE_DIR
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
source "$(dirname "$0")/lib.sh"
# pg_bin and as_pg_owner, as scripts/test starts its servers.
source "$(dirname "$0")/../../scripts/lib/common.sh"
tidemark=$1
test_setup health

own_state_server

orders_tables 20

port=$(free_port)
mkdir -p "$work/pipelines"
cat >"$work/tidemark.yaml" <<YAML
state: state
connections:
  source: { dsn: "host=$PGHOST port=$PGPORT dbname=${db}_source" }
  target: { dsn: "host=$PGHOST port=$PGPORT dbname=${db}_target" }
  state: { dsn: "host=$state_dir port=$PGPORT dbname=postgres connect_timeout=2" }
metrics: { listen: "127.0.0.1:$port" }
shutdown_grace: 5s
YAML
cat >"$work/pipelines/shop.yaml" <<'YAML'
pipeline: shop
source: source
target: target
schedule: "* * * * * *"
tables:
  - { name: orders, source_table: orders, target_table: orders, key: [id], cursor: updated_at, lookback: 1m }
YAML

"$tidemark" serve --config "$work/tidemark.yaml" >"$work/serve.log" 2>&1 &
serve=$!
pids+=("$serve")
code() { curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port$1"; }
answers() { [ "$(code "$1")" = "$2" ]; }
body() { curl -s "http://127.0.0.1:$port$1"; }

check "/metrics answers 200" eventually 20 answers /metrics 200
check "/healthz answers 200" answers /healthz 200
check "/healthz says ok" test "$(body /healthz)" = ok
check "/readyz answers 200 once the state database was reached" eventually 20 answers /readyz 200
check "any other path is 404" answers /status 404
check "HEAD /healthz is 200" bash -c "curl -s -I http://127.0.0.1:$port/healthz | head -n 1 | grep -q ' 200'"
check "POST is refused (405)" bash -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' -X POST http://127.0.0.1:$port/healthz)\" = 405 ]"
check "tidemark healthcheck exits 0" "$tidemark" healthcheck --config "$work/tidemark.yaml"
check "tidemark healthcheck --ready exits 0" "$tidemark" healthcheck --ready --config "$work/tidemark.yaml"
loaded() { [ "$(psql -X -At -d "${db}_target" -c 'select count(*) from orders')" = 20 ]; }
check "the table loads, with its state in the state database" eventually 20 loaded

# A second daemon on the same port: a clear start-up error, exit 1.
status=0
"$tidemark" serve --config "$work/tidemark.yaml" >"$work/second.log" 2>&1 || status=$?
check "a port in use stops the start with exit 1" test "$status" -eq 1
check "a port in use is said in words" grep -q "cannot serve metrics on 127.0.0.1:$port: port $port on 127.0.0.1 is already in use" "$work/second.log"

# The state database goes away: not ready, and why; still alive.
state_server stop
check "/readyz answers 503 while the state database is stopped" eventually 40 answers /readyz 503
check "/readyz says the state database is unreachable" bash -c \
  "curl -s http://127.0.0.1:$port/readyz | grep -q '^the state database state is unreachable: '"
check "/readyz's reason is one line" test "$(body /readyz | wc -l)" -eq 1
check "/healthz stays 200" answers /healthz 200
status=0
"$tidemark" healthcheck --ready --config "$work/tidemark.yaml" >/dev/null 2>"$work/healthcheck.err" || status=$?
check "tidemark healthcheck --ready exits 1" test "$status" -eq 1
check "tidemark healthcheck --ready says 503 and why" grep -q '^/readyz: 503 the state database state is unreachable' \
  "$work/healthcheck.err"
check "tidemark healthcheck (liveness) still exits 0" "$tidemark" healthcheck --config "$work/tidemark.yaml"

state_server start
check "/readyz is back to 200 once the state database is up" eventually 40 answers /readyz 200

# SIGTERM: not ready while it stops, exit 0, and then nothing answers.
kill -TERM "$serve"
status=0
wait "$serve" || status=$?
check "SIGTERM exits 0" test "$status" -eq 0
check "the log says it stopped" grep -q 'stopped' "$work/serve.log"
status=0
"$tidemark" healthcheck --config "$work/tidemark.yaml" >/dev/null 2>"$work/healthcheck.err" || status=$?
check "tidemark healthcheck exits 1 when nothing answers" test "$status" -eq 1
check "and says it could not connect" grep -q "^cannot connect to http://127.0.0.1:$port/healthz" "$work/healthcheck.err"

if [ "$failed" -gt 0 ]; then
  echo "--- serve log (tail) ---" >&2
  tail -n 30 "$work/serve.log" >&2
fi
report
