# shellcheck shell=bash
# For the faults suite (source it after ../lib.sh): a network and a mount
# namespace of the test's own, with a PostgreSQL server of its own inside,
# so that the test can drop packets (iptables in that namespace) between
# the server and some of its clients, or give it a small disk (a tmpfs
# mounted in that namespace), while nothing outside changes. The
# namespaces live as long as the processes in them: everything is gone
# when the test exits, Ctrl-C included.
#
# Inside, 127.0.0.1 and 127.0.0.2 both reach the server on port 5432: a
# client told to use 127.0.0.2 can be cut off (ns_cut 127.0.0.2) while the
# others go on. The test itself reaches the server over its Unix socket,
# which no packet filter touches.

ns_holder=""
ns_server_dir=""

# faults_setup NAME: as root (exit 77, skipped, otherwise), $work a fresh
# folder, the namespace and its server started; all of it gone on exit.
faults_setup() {
  [ "$(id -u)" -eq 0 ] || { echo "skipped: a network namespace and iptables need root"; exit 77; }
  unshare --net --mount true 2>/dev/null ||
    { echo "skipped: this machine refuses new network and mount namespaces (a container without the privilege)"; exit 77; }
  work=$(mktemp -d "/tmp/tidemark-$1.XXXXXX")
  trap ns_stop EXIT
  ns_start
}

# ns_start: the namespace (loopback up) and the server in it (trust auth,
# socket in $work/server, $work being the test's scratch folder). Sets
# PGHOST/PGPORT/PGUSER for the test's psql.
ns_start() {
  : "${work:?set work to the scratch folder first}"
  unshare --net --mount --propagation private sleep infinity &
  ns_holder=$!
  # unshare execs sleep in the new namespaces: wait until it has.
  eventually 5 bash -c "[ \"\$(readlink /proc/$ns_holder/ns/net)\" != \"\$(readlink /proc/self/ns/net)\" ]"
  in_ns ip link set lo up
  ns_server_dir=$work/server
  mkdir -p "$ns_server_dir"
  chmod 755 "$work" "$ns_server_dir"
  [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$ns_server_dir"
  as_pg_owner "$(pg_bin)/initdb" -D "$ns_server_dir/data" -U postgres --auth=trust --no-sync \
    >"$ns_server_dir/initdb.log" 2>&1 || { cat "$ns_server_dir/initdb.log" >&2; return 1; }
  echo "host all all 127.0.0.0/8 trust" >>"$ns_server_dir/data/pg_hba.conf"
  in_ns runuser -u postgres -- "$(pg_bin)/pg_ctl" -D "$ns_server_dir/data" -l "$ns_server_dir/server.log" -w -t 60 \
    start -o "-k $ns_server_dir -p 5432 -c listen_addresses='127.0.0.1,127.0.0.2' -c fsync=off" >/dev/null ||
    { cat "$ns_server_dir/server.log" >&2; return 1; }
  export PGHOST=$ns_server_dir PGPORT=5432 PGUSER=postgres
}

# in_ns COMMAND...: runs COMMAND inside the namespace.
in_ns() { nsenter --net="/proc/$ns_holder/ns/net" --mount="/proc/$ns_holder/ns/mnt" --wd="$PWD" "$@"; }
# ns_spawn LOG COMMAND...: starts COMMAND inside the namespace in the
# background, its output in LOG; sets $spawned to its pid (nsenter execs
# COMMAND, so that is COMMAND's own pid), stopped on exit.
ns_spawn() {
  local log=$1
  shift
  nsenter --net="/proc/$ns_holder/ns/net" --mount="/proc/$ns_holder/ns/mnt" --wd="$PWD" "$@" >"$log" 2>&1 &
  spawned=$!
  pids+=("$spawned")
}

# ns_cut ADDRESS: every packet to or from ADDRESS is dropped, silently, as
# when a host vanishes. ns_heal ADDRESS undoes it.
ns_cut() {
  in_ns iptables -I INPUT -d "$1" -j DROP
  in_ns iptables -I INPUT -s "$1" -j DROP
}
# ns_vanish PID ADDRESS: the host of process PID, which reaches the
# server at ADDRESS, vanishes: every packet dropped, then the process
# killed, so that no FIN or RST ever arrives (a power loss). Sets
# $vanished to that moment ($EPOCHREALTIME).
ns_vanish() {
  ns_cut "$2"
  kill -9 "$1"
  wait "$1" 2>/dev/null || true
  # shellcheck disable=SC2034  # read by the test that sources this file
  vanished=$EPOCHREALTIME
}
ns_heal() {
  in_ns iptables -D INPUT -d "$1" -j DROP
  in_ns iptables -D INPUT -s "$1" -j DROP
}

# ns_disk DIR SIZE: a tmpfs of SIZE (as mount takes it: 2m) at DIR, owned
# by the server's user, seen only inside the namespace; ns_disk_grow DIR
# SIZE gives it more room.
ns_disk() {
  mkdir -p "$1"
  in_ns mount -t tmpfs -o "size=$2,mode=700,uid=$(id -u postgres),gid=$(id -g postgres)" tmpfs "$1"
}
ns_disk_grow() { in_ns mount -o "remount,size=$2" "$1"; }

# ns_daemon_config FILE ADDRESS [DSN_EXTRA [MORE [PIPELINES_DIR]]]: a
# daemon file whose connections `source` and `target` reach the databases
# of those names on the namespace's server at ADDRESS (the state in the
# target), DSN_EXTRA added to both DSNs, MORE (metrics, fleet, log: YAML
# lines) after them, its pipelines in PIPELINES_DIR (pipelines).
ns_daemon_config() {
  cat >"$1" <<YAML
state: target
connections:
  source: { dsn: "host=$2 port=5432 dbname=source ${3:-}" }
  target: { dsn: "host=$2 port=5432 dbname=target ${3:-}" }
pipelines_dir: ${5:-pipelines}
${4:-}
YAML
}

# ns_pipeline DIR NAME TABLE: the pipeline file DIR/NAME.yaml, from the
# database source into target, fired daily, with one table (TABLE, its
# YAML map).
ns_pipeline() {
  mkdir -p "$1"
  cat >"$1/$2.yaml" <<YAML
pipeline: $2
source: source
target: target
schedule: "@daily"
tables:
  - $3
YAML
}

# check_waits NAME SECONDS COMMAND...: the check NAME on COMMAND, and a
# second one that it took at least SECONDS (it waited for what the test
# held back, rather than passing it by).
check_waits() {
  local name=$1 least=$2 started took
  shift 2
  started=$EPOCHREALTIME
  check "$name" "$@"
  took=$(seconds_since "$started")
  check "... and it waited ($took s, at least $least)" awk -v t="$took" -v l="$least" 'BEGIN { exit !(t >= l) }'
}

ns_stop() {
  local pid
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  if [ -n "$ns_server_dir" ] && [ -f "$ns_server_dir/data/postmaster.pid" ]; then
    as_pg_owner "$(pg_bin)/pg_ctl" -D "$ns_server_dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  [ -n "$ns_holder" ] && kill -9 "$ns_holder" 2>/dev/null
  wait 2>/dev/null || true
  [ -n "${KEEP_WORK:-}" ] || rm -rf "$work"
}
