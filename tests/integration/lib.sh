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

# Prints the closing line; fails when any check failed.
report() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
