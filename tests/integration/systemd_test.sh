#!/usr/bin/env bash
# The Debian package under a real systemd: builds the package from BUILD_DIR
# (cpack), boots a fresh Debian 12 container (systemd-nspawn, private
# network) with its own PostgreSQL, `apt install`s the package, and checks
# what docs/operations.md promises of the unit: the user and permissions
# the package sets up, READY after `systemctl enable --now`, runs landing
# rows, `systemctl reload` with a valid change (a new table fills) and an
# invalid one (the old configuration keeps running, the journal names the
# error), the watchdog restarting a SIGSTOPped daemon, `systemctl stop`
# within the grace period, the runs in `journalctl -u tidemark`, the
# sandbox on the live process, `systemd-analyze security` at 1.5 or less,
# and that `apt remove` stops the service and `apt purge` drops its files.
#
# The container's root is debootstrapped once (about 2 minutes: systemd,
# PostgreSQL, the package's dependencies) into $TIDEMARK_TEST_CACHE
# (default /var/cache/tidemark-test) and each run boots an overlay of it, so
# runs leave nothing behind. Needs root, debootstrap and systemd-container
# (scripts/test installs them); exits 77 (skipped, with the reason) when
# they or the Debian mirror are not there.
# Usage: systemd_test.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
# lib.sh wants the harness's server; this test brings its own.
TIDEMARK_PG_DIR=${TIDEMARK_PG_DIR:-none}
# shellcheck source-path=SCRIPTDIR
source "$(dirname "$0")/lib.sh"

skip() {
  echo "SKIPPED: the systemd lane cannot run here: $*"
  exit 77
}
[ "$(id -u)" -eq 0 ] || skip "it needs root (systemd-nspawn, mount)"
for tool in debootstrap systemd-nspawn nsenter cpack dpkg-deb; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/test installs debootstrap and systemd-container)"
done
grep -qw overlay /proc/filesystems || skip "the kernel has no overlay file system"

started=$EPOCHREALTIME
work=$(mktemp -d /tmp/tidemark-systemd.XXXXXX)
nspawn_pid=
init_pid=
cleanup() {
  # Stop the container: SIGTERM asks nspawn to power it off; its init's
  # SIGKILL ends every process in it if that hangs.
  if [ -n "$nspawn_pid" ] && kill -0 "$nspawn_pid" 2>/dev/null; then
    kill -TERM "$nspawn_pid" 2>/dev/null || true
    local _
    for _ in $(seq 1 50); do kill -0 "$nspawn_pid" 2>/dev/null || break; sleep 0.2; done
    if kill -0 "$nspawn_pid" 2>/dev/null; then
      if [ -n "$init_pid" ]; then kill -KILL "$init_pid" 2>/dev/null || true; fi
      kill -KILL "$nspawn_pid" 2>/dev/null || true
    fi
    wait "$nspawn_pid" 2>/dev/null || true
  fi
  mountpoint -q "$work/root" && umount "$work/root"
  rm -rf "$work"
}
trap cleanup EXIT

log() { printf '==> %s (%.1fs)\n' "$*" "$(seconds_since "$started")"; }
seconds_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }'; }

# --- The package, from this build ------------------------------------------
cpack --config "$build/CPackConfig.cmake" -B "$work/package" >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log"; exit 1; }
deb=$(echo "$work"/package/tidemark_*.deb)
[ -f "$deb" ] || { echo "cpack made no package"; exit 1; }
depends=$(dpkg-deb -f "$deb" Depends)
log "packaged $(basename "$deb")"

# --- The cached root ---------------------------------------------------------
cache=${TIDEMARK_TEST_CACHE:-${XDG_CACHE_HOME:-/var/cache}/tidemark-test}
# The name carries the recipe: change one, change the other.
base=$cache/bookworm-systemd-postgresql-1
in_base() { systemd-nspawn -q --register=no --keep-unit -D "$base" "$@"; }
mkdir -p "$cache"
exec 9>"$cache/lock"
flock 9  # one preparation at a time, and none while another run boots the root
if [ ! -f "$base/.complete" ]; then
  log "debootstrapping the container's root into $base (once)"
  rm -rf "$base"
  debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus bookworm "$base" "$(debian_mirror)" \
    >"$work/debootstrap.log" 2>&1 || { tail -5 "$work/debootstrap.log"; rm -rf "$base"; skip "debootstrap failed (no Debian mirror?)"; }
  in_base sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql' \
    >"$work/postgresql.log" 2>&1 || { tail -5 "$work/postgresql.log"; rm -rf "$base"; skip "PostgreSQL could not be installed in the container's root"; }
  touch "$base/.complete"
fi
# The package's dependencies, so `apt install` in each run needs no download;
# a package whose dependencies changed adds them once.
deps_stamp=$base/.deps-$(echo "$depends" | sha256sum | cut -c1-16)
if [ ! -f "$deps_stamp" ]; then
  log "installing the package's dependencies in the cached root"
  in_base sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get satisfy -y -qq --no-install-recommends '$depends' && apt-get clean" \
    >"$work/deps.log" 2>&1 || { tail -5 "$work/deps.log"; exit 1; }
  touch "$deps_stamp"
fi
flock -s 9  # held, shared, until this run ends: the root is this run's overlay's lower layer

# --- Boot a fresh overlay of it ---------------------------------------------
mkdir -p "$work/upper" "$work/overlay-work" "$work/root"
mount -t overlay overlay -o "lowerdir=$base,upperdir=$work/upper,workdir=$work/overlay-work" "$work/root"
cp "$deb" "$work/root/root/"
machine=tidemark-test-$$
systemd-nspawn --register=no --keep-unit --console=passive --private-network -b -D "$work/root" -M "$machine" \
  >"$work/console.log" 2>&1 &
nspawn_pid=$!
# The container's init is the child of systemd-nspawn that is PID 1 in a
# namespace of its own (NSpid: <host pid> 1); nspawn forks helpers beside
# it that exit again, and entering one of those fails.
container_init() {
  local pid
  for pid in $(pgrep -P "$nspawn_pid"); do
    if awk '/^NSpid:/ { found = NF > 2 && $NF == 1 } END { exit !found }' "/proc/$pid/status" 2>/dev/null; then
      init_pid=$pid
      return 0
    fi
  done
  return 1
}
eventually 20 container_init || { cat "$work/console.log"; exit 1; }
# Commands in the container get its own clean environment: none of the
# harness's PGHOST, PGPORT or PGUSER.
in_container() { nsenter -t "$init_pid" -a env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"; }
booted() { in_container systemctl is-system-running --wait >/dev/null 2>&1 || [ "$(in_container systemctl is-system-running 2>/dev/null)" = degraded ]; }
eventually 60 booted || { in_container systemctl --failed --no-pager || true; cat "$work/console.log"; exit 1; }
log "booted $machine"

# --- Install the package -----------------------------------------------------
in_container env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "/root/$(basename "$deb")" \
  >"$work/install.log" 2>&1 || { cat "$work/install.log"; exit 1; }
log "installed the package"
check "the package created the tidemark system user" \
  test "$(in_container getent passwd tidemark | cut -d: -f7)" = /usr/sbin/nologin
check "/etc/tidemark is root:tidemark 750" test "$(in_container stat -c '%U:%G %a' /etc/tidemark)" = "root:tidemark 750"
# shellcheck disable=SC2016  # dpkg-query's own ${field} syntax
conffile() { in_container dpkg-query -W -f='${Conffiles}' tidemark | grep -q " $1 "; }
check "the example configuration is a conffile" conffile /etc/tidemark/tidemark.yaml
check "the man page, alert rules and dashboard are installed" in_container test -f /usr/share/man/man1/tidemark.1 \
  -a -f /usr/share/tidemark/prometheus/tidemark-alerts.yml -a -f /usr/share/tidemark/grafana/tidemark.json
check "the unit is installed, not enabled" test "$(in_container systemctl is-enabled tidemark || true)" = disabled

# --- A database, and the administrator's edits --------------------------------
psql_as() {  # psql_as USER DATABASE SQL
  in_container runuser -u "$1" -- psql -X -q -At -v ON_ERROR_STOP=1 -h /run/postgresql -d "$2" -c "$3"
}
pg_up() { in_container runuser -u postgres -- pg_isready -q -h /run/postgresql; }
eventually 30 pg_up || { in_container systemctl status postgresql@15-main --no-pager || true; exit 1; }
psql_as postgres postgres "create role tidemark login" >/dev/null
for database in shop warehouse; do
  in_container runuser -u postgres -- createdb -h /run/postgresql -O tidemark "$database"
done
psql_as tidemark shop "create table orders (id int primary key, updated_at timestamptz not null);
  insert into orders select g, clock_timestamp() - interval '1 hour' from generate_series(1, 100) g"
psql_as tidemark warehouse "create table orders (id int primary key, updated_at timestamptz not null);
  create table orders_copy (id int primary key, updated_at timestamptz not null)"

# The shipped tidemark.yaml names its connections with dsn_env: the
# environment file gives them (peer authentication over the socket, as the
# tidemark user). The example pipelines give way to one that fires every second.
in_container sh -c 'umask 027 && printf "%s\n" "SHOP_DSN=host=/run/postgresql dbname=shop" \
  "WAREHOUSE_DSN=host=/run/postgresql dbname=warehouse" >/etc/tidemark/environment && chgrp tidemark /etc/tidemark/environment'
in_container rm /etc/tidemark/pipelines/shop_orders.yaml /etc/tidemark/pipelines/shop_customers.yaml \
  /etc/tidemark/pipelines/marts.yaml
pipeline() {  # pipeline TABLE...: /etc/tidemark/pipelines/shop.yaml loading orders into each
  {
    echo 'pipeline: shop'
    echo 'source: shop'
    echo 'target: warehouse'
    echo 'schedule: "* * * * * *"'
    echo 'stale_after: 1h'
    echo 'tables:'
    local t
    for t in "$@"; do
      echo "  - { name: $t, source_table: orders, target_table: $t, key: [id], cursor: updated_at, lookback: 1m }"
    done
  } | in_container tee /etc/tidemark/pipelines/shop.yaml >/dev/null
}
pipeline orders

# --- Start: READY, rows ---------------------------------------------------------
t0=$EPOCHREALTIME
in_container systemctl enable --now tidemark >"$work/enable.log" 2>&1 ||
  { cat "$work/enable.log"; in_container journalctl -u tidemark --no-pager | tail -20; exit 1; }
log "systemctl enable --now returned after $(seconds_since "$t0")s"
unit() { in_container systemctl show -p "$1" --value tidemark; }
check "active once the start job returns (READY=1)" test "$(in_container systemctl is-active tidemark)" = active
check "READY came with a status line" test -n "$(unit StatusText)"
echo "StatusText: $(unit StatusText)"
loaded() { [ "$(psql_as tidemark warehouse "select count(*) from $1")" = "$2" ]; }
check "a run lands the source's rows in the target" eventually 30 loaded orders 100

# The sandbox is on the live process, not only in the file.
main_pid=$(unit MainPID)
status=$(in_container cat "/proc/$main_pid/status")
check "runs as tidemark" test "$(in_container stat -c %U "/proc/$main_pid")" = tidemark
check "no capabilities" grep -q '^CapEff:[[:space:]]*0000000000000000$' <<<"$status"
check "no new privileges" grep -q '^NoNewPrivs:[[:space:]]*1$' <<<"$status"
check "a seccomp filter" grep -q '^Seccomp:[[:space:]]*2$' <<<"$status"
check "its own user namespace (PrivateUsers)" \
  test "$(in_container readlink "/proc/$main_pid/ns/user")" != "$(in_container readlink /proc/1/ns/user)"

# --- Security score, on the live unit --------------------------------------------
in_container systemd-analyze security --no-pager tidemark.service >"$work/security.txt" 2>&1 || true
score=$(awk '/Overall exposure level for tidemark.service/ { print $(NF-2) }' "$work/security.txt")
echo "systemd-analyze security tidemark.service: ${score:-none}"
grep '✗' "$work/security.txt" | sed 's/^/  /' || true
check "exposure 1.5 or less (got ${score:-none})" awk -v s="${score:-99}" 'BEGIN { exit !(s <= 1.5) }'

# --- Reload: a valid change, then an invalid one ----------------------------------
pipeline orders orders_copy
t0=$EPOCHREALTIME
check "systemctl reload (a new table) succeeds" in_container systemctl reload tidemark
log "reload returned after $(seconds_since "$t0")s"
check "the new table fills" eventually 30 loaded orders_copy 100
check "the reload kept the process" test "$(unit MainPID)" = "$main_pid"

since=$(in_container date '+%Y-%m-%d %H:%M:%S')
in_container sh -c 'printf "%s\n" "pipeline: broken" "source: shop" "target: warehouse" "schedule: \"every now and then\"" \
  "tables: []" >/etc/tidemark/pipelines/broken.yaml'
check "systemctl reload (an invalid file) returns" in_container systemctl reload tidemark
journal_since() { in_container journalctl -u tidemark --no-pager -o cat --since "$since"; }
named() { journal_since | grep -q "broken.yaml"; }
check "the journal names the invalid file" eventually 10 named
kept() { journal_since | grep -q "keeping the one in use"; }
check "the journal says the old configuration stays" eventually 10 kept
check "still active, same process" test "$(in_container systemctl is-active tidemark) $(unit MainPID)" = "active $main_pid"
psql_as tidemark shop "insert into orders select g, clock_timestamp() - interval '1 second' from generate_series(101, 110) g"
both_loaded() { loaded orders "$1" && loaded orders_copy "$1"; }
check "the old configuration keeps running (new rows land in both tables)" eventually 30 both_loaded 110
in_container rm /etc/tidemark/pipelines/broken.yaml
check "reload back to a valid configuration" in_container systemctl reload tidemark

# --- Watchdog: a stopped daemon is restarted -------------------------------------
# A short WatchdogSec for the test (it takes effect at the next start).
in_container mkdir -p /etc/systemd/system/tidemark.service.d
in_container sh -c 'printf "%s\n" "[Service]" "WatchdogSec=2s" "TimeoutAbortSec=5s" \
  >/etc/systemd/system/tidemark.service.d/watchdog.conf'
in_container systemctl daemon-reload
in_container systemctl restart tidemark
check "the drop-in's watchdog is in force" test "$(unit WatchdogUSec)" = 2s
stopped_pid=$(unit MainPID)
restarts_before=$(unit NRestarts)
t0=$EPOCHREALTIME
in_container sh -c "kill -STOP $stopped_pid"  # the shell's kill: procps is not installed
restarted() {
  local pid
  pid=$(unit MainPID)
  [ "$pid" != 0 ] && [ "$pid" != "$stopped_pid" ] && [ "$(in_container systemctl is-active tidemark)" = active ]
}
check "the watchdog restarts a SIGSTOPped daemon" eventually 40 restarted
log "restarted by the watchdog after $(seconds_since "$t0")s"
check "counted as a restart" test "$(unit NRestarts)" -gt "$restarts_before"
watchdog_logged() { in_container journalctl -u tidemark --no-pager | grep -qi 'watchdog timeout'; }
check "the journal says it was the watchdog" eventually 5 watchdog_logged
psql_as tidemark shop "insert into orders select g, clock_timestamp() - interval '1 second' from generate_series(111, 120) g"
check "the restarted daemon runs again" eventually 30 loaded orders 120

# --- Stop within the grace period ---------------------------------------------------
t0=$EPOCHREALTIME
in_container systemctl stop tidemark
stop_seconds=$(seconds_since "$t0")
log "systemctl stop took ${stop_seconds}s"
check "stop returns within shutdown_grace (30s)" awk -v s="$stop_seconds" 'BEGIN { exit !(s < 30) }'
check "stopped cleanly (exit 0, not killed)" test "$(unit Result) $(unit ExecMainStatus)" = "success 0"
in_container journalctl -u tidemark --no-pager -o cat >"$work/journal.txt"
check "the journal has the daemon's stop" grep -q ' stopped$' "$work/journal.txt"

# --- The journal ------------------------------------------------------------------
runs=$(grep -c 'shop\.orders: success run' "$work/journal.txt" || true)
echo "journalctl -u tidemark: $(wc -l <"$work/journal.txt") lines, $runs run lines of shop.orders"
check "journalctl -u tidemark shows the runs" test "$runs" -ge 3

# --- Removal: prerm stops the running service, purge drops its files ------------
in_container systemctl start tidemark
in_container env DEBIAN_FRONTEND=noninteractive apt-get remove -y -q tidemark >"$work/remove.log" 2>&1 ||
  { cat "$work/remove.log"; exit 1; }
check "apt remove stops the running service" test "$(in_container systemctl is-active tidemark || true)" = inactive
check "apt remove takes the binary and the unit, keeps the configuration" \
  in_container test ! -e /usr/bin/tidemark -a ! -e /lib/systemd/system/tidemark.service -a -f /etc/tidemark/tidemark.yaml
in_container env DEBIAN_FRONTEND=noninteractive apt-get purge -y -q tidemark >"$work/purge.log" 2>&1 ||
  { cat "$work/purge.log"; exit 1; }
check "apt purge takes the conffiles and the enablement" in_container test ! -e /etc/tidemark/tidemark.yaml \
  -a ! -e /etc/systemd/system/multi-user.target.wants/tidemark.service

[ "$failed" -eq 0 ] || tail -40 "$work/journal.txt"
log "done"
report
