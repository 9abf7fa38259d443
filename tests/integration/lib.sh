# shellcheck shell=bash
# Shared by the shell integration tests (source it): a scratch folder and a
# source and a target database that are removed on exit, background
# processes that are stopped, and one-line assertions counted for the
# closing "N passed, M failed" line.
: "${TIDEMARK_PG_DIR:?run through scripts/test, which starts PostgreSQL}"
# shellcheck source-path=SCRIPTDIR source=../../scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/common.sh"

passed=0
failed=0
pids=()  # background processes to stop on exit

# A command that fails outside a check stops the test (set -e) and, inside
# a function, would do so without a word: say where. Not in a command
# substitution's subshell, whose failures are its caller's to judge.
say_where_stopped() {
  local status=$?
  [ "$BASH_SUBSHELL" -eq 0 ] || return 0
  echo "FAILED: the test stopped at ${BASH_SOURCE[1]##*/} line ${BASH_LINENO[0]}: $BASH_COMMAND (exit $status)" >&2
}
set -E
trap say_where_stopped ERR

# test_setup NAME: sets $work (a fresh folder) and $db (the prefix of
# databases ${db}_source and ${db}_target, created empty).
test_setup() {
  work=$(mktemp -d "/tmp/tidemark-$1.XXXXXX")
  db=${1}_$$
  trap test_cleanup EXIT
  createdb "${db}_source"
  createdb "${db}_target"
}

test_cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  dropdb --if-exists --force "${db}_source" >/dev/null 2>&1 || true
  dropdb --if-exists --force "${db}_target" >/dev/null 2>&1 || true
  [ -n "${KEEP_WORK:-}" ] || rm -rf "$work"
}

# own_state_server (after test_setup): a PostgreSQL server of the test's
# own, for a state database the test stops and starts while the harness's
# server, shared with the tests running beside it, stays up. Data and
# socket in $state_dir ($work/state-server), port $PGPORT; started now,
# `state_server start|stop` after, gone on exit.
own_state_server() {
  state_dir=$work/state-server
  mkdir -p "$state_dir"
  chmod 755 "$work" "$state_dir"
  [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$state_dir"
  as_pg_owner "$(pg_bin)/initdb" -D "$state_dir/data" -U postgres --auth=trust --no-sync >"$state_dir/initdb.log" 2>&1 ||
    { cat "$state_dir/initdb.log" >&2; exit 1; }
  state_server start
  trap stop_state_server EXIT
}

state_server() {  # state_server start|stop
  if [ "$1" = start ]; then
    as_pg_owner "$(pg_bin)/pg_ctl" -D "$state_dir/data" -l "$state_dir/server.log" -w -t 60 start \
      -o "-k $state_dir -p $PGPORT -c listen_addresses='' -c fsync=off" >/dev/null
  else
    as_pg_owner "$(pg_bin)/pg_ctl" -D "$state_dir/data" -m fast -w stop >/dev/null
  fi
}

stop_state_server() {
  as_pg_owner "$(pg_bin)/pg_ctl" -D "$state_dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  test_cleanup
}

# cut_sessions: terminates tidemark's sessions from the server side, in
# this test's databases only (tests beside it have tidemark sessions too).
cut_sessions() {
  psql -X -q -d postgres -c "select pg_terminate_backend(pid) from pg_stat_activity
                             where application_name = 'tidemark' and pid <> pg_backend_pid()
                               and datname in ('${db}_source', '${db}_target')" >/dev/null
}

# orders_tables N: table orders in the source, N rows an hour old, and an
# empty one in the target, as most daemon tests load.
orders_tables() {
  psql -X -q -v ON_ERROR_STOP=1 -d "${db}_source" -c \
    "create table orders (id int primary key, updated_at timestamptz not null default clock_timestamp());
     insert into orders select g, clock_timestamp() - interval '1 hour' from generate_series(1, $1) g"
  psql -X -q -v ON_ERROR_STOP=1 -d "${db}_target" -c \
    "create table orders (id int primary key, updated_at timestamptz not null)"
}

# start_prometheus PORT: a real Prometheus on 127.0.0.1:PORT (or, when a
# test beside this one took that port meanwhile, on another free one) with
# $work/prometheus.yml, stopped on exit; returns once it says it is ready,
# and sets prometheus_port. query EXPR asks it. Fails, showing its log,
# when three in a row do not get ready within a minute each.
start_prometheus() {
  local port=$1 attempt pid tries
  for attempt in 1 2 3; do
    prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/prometheus" \
      --web.listen-address="127.0.0.1:$port" >"$work/prometheus.log" 2>&1 &
    pid=$!
    pids+=("$pid")
    for ((tries = 0; tries < 600; tries++)); do
      # Ready, and this test's own: not a Prometheus beside it on the port.
      if curl -sf "http://127.0.0.1:$port/-/ready" >/dev/null 2>&1 &&
        curl -sf "http://127.0.0.1:$port/api/v1/status/flags" |
        jq -e --arg path "$work/prometheus" '.data["storage.tsdb.path"] == $path' >/dev/null 2>&1; then
        prometheus_port=$port
        return 0
      fi
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    echo "prometheus did not get ready on port $port (attempt $attempt):" >&2
    tail -n 3 "$work/prometheus.log" >&2
    port=$(free_port)
  done
  prometheus_port=$port
  return 1
}
# prometheus_with_rules METRICS_PORT RULES_FILE: a real Prometheus on a
# free port (not METRICS_PORT) that scrapes tidemark on METRICS_PORT each
# second and evaluates RULES_FILE each second.
prometheus_with_rules() {
  local port
  port=$(free_port)
  while [ "$port" = "$1" ]; do port=$((port + 1)); done
  cat >"$work/prometheus.yml" <<YAML
global: { scrape_interval: 1s, evaluation_interval: 1s }
rule_files: ["$2"]
scrape_configs:
  - job_name: tidemark
    static_configs: [{ targets: ["127.0.0.1:$1"] }]
YAML
  start_prometheus "$port"
}
query() { curl -sf "http://127.0.0.1:$prometheus_port/api/v1/query" --data-urlencode "query=$1"; }

check() {  # check NAME COMMAND...: one assertion
  local name=$1
  shift
  if "$@"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAILED: $name" >&2
  fi
}

# stop_serve PID: SIGTERM to a `tidemark serve` started by the test, which
# must stop within 40 s and exit 0 (else it is killed).
stop_serve() {
  local serve=$1 status=0
  kill -TERM "$serve" 2>/dev/null || true
  serve_gone() { ! kill -0 "$serve" 2>/dev/null; }
  check "serve stops on SIGTERM" eventually 40 serve_gone
  serve_gone || kill -9 "$serve" 2>/dev/null || true
  wait "$serve" || status=$?
  check "serve exits 0 after SIGTERM" test "$status" -eq 0
}

# eventually SECONDS COMMAND...: retries COMMAND until it succeeds or time is up.
eventually() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.2
  done
}

# daemon_config LOG_LEVEL: writes $work/tidemark.yaml for the test's two
# databases (the state in the target) with metrics on a free port, and
# makes $work/pipelines for the pipeline files.
daemon_config() {
  mkdir -p "$work/pipelines"
  cat >"$work/tidemark.yaml" <<YAML
state: target
connections:
  source: { dsn: "host=$PGHOST port=$PGPORT dbname=${db}_source" }
  target: { dsn: "host=$PGHOST port=$PGPORT dbname=${db}_target" }
metrics: { listen: "127.0.0.1:$(free_port)" }
log: { level: $1 }
YAML
}

# The Debian mirror apt on this machine uses (a deb822 .sources file or a
# one-line list), for debootstrap; the security archive is not one.
debian_mirror() {
  local uri
  uri=$(awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
  [ -n "$uri" ] || uri=$(awk '$1 == "deb" && $3 !~ /security/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)
  echo "${uri:-http://deb.debian.org/debian}"
}

# start_member N (after daemon_config, with $tidemark): member N of a fleet
# sharing $work/tidemark.yaml, with its own metrics port
# (member_port[N]), configuration and log ($work/memberN.yaml, .log) and
# pid (member_pid[N]), stopped on exit; returns once it listens, so the
# next member picks another free port. member_value N SERIES: that
# series' sample in member N's scrape.
# shellcheck disable=SC2034  # member_pid is read by the tests that source this
declare -A member_pid member_port
start_member() {
  local n=$1 port attempt deadline
  for attempt in 1 2 3; do
    port=$(free_port)
    sed "s|127.0.0.1:[0-9]*|127.0.0.1:$port|" "$work/tidemark.yaml" >"$work/member$n.yaml"
    "${tidemark:?start_member runs \$tidemark}" serve --config "$work/member$n.yaml" >>"$work/member$n.log" 2>&1 &
    # shellcheck disable=SC2034  # read by the tests that source this
    member_pid[$n]=$!
    member_port[$n]=$port
    pids+=("$!")
    # A member starts within a second on a quiet machine; 30 s for one
    # whose cores a build beside it takes.
    deadline=$((SECONDS + 30))
    until curl -sf "http://127.0.0.1:$port/healthz" -o /dev/null; do
      kill -0 "${member_pid[$n]}" 2>/dev/null || break
      [ $SECONDS -lt $deadline ] || break
      sleep 0.2
    done
    curl -sf "http://127.0.0.1:$port/healthz" -o /dev/null && return 0
    # A port free when chosen can be taken before the member binds it (by
    # a daemon of a test beside this one, or as a connection's own port):
    # the member says so and exits, and another port is tried.
    kill -0 "${member_pid[$n]}" 2>/dev/null && break
    grep -q "is already in use" "$work/member$n.log" || break
  done
  # One that does not answer stops the test (the members after it would
  # meet the same trouble), with its log's last lines.
  check "member $n answers /healthz within 30 s" false
  echo "member $n's log, last lines:" >&2
  tail -n 20 "$work/member$n.log" >&2
  report || exit 1
}
member_value() {
  curl -sf "http://127.0.0.1:${member_port[$1]}/metrics" | awk -v s="$2" '$1 == s { print $2 }'
}

# Prints the closing line; fails when any check failed.
report() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
