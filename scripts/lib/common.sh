# shellcheck shell=bash
# Shared by scripts/test and scripts/demo: packages, build, and a throwaway
# PostgreSQL server with an optional hot standby. Source it; it defines
# functions and sets nothing else.

TIDEMARK_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# Debian packages the build, the tests and the demo need.
TIDEMARK_PACKAGES=(
  build-essential cmake pkg-config
  libboost-dev libboost-system-dev libpqxx-dev libpq-dev libyaml-cpp-dev
  libspdlog-dev libfmt-dev prometheus-cpp-dev doctest-dev
  libhowardhinnant-date-dev libsystemd-dev libcli11-dev nlohmann-json3-dev
  tzdata postgresql postgresql-client prometheus curl jq python3
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
  cmake -S "$TIDEMARK_ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTIDEMARK_WERROR=ON "$@" >/dev/null
  cmake --build "$BUILD_DIR" -j "$(nproc)"
}

# The built tidemark binary (in $BUILD_DIR, default build/), for the
# benchmarks; exits 2 when it has not been built.
built_tidemark() {
  local binary=${BUILD_DIR:-$TIDEMARK_ROOT/build}/daemon/tidemark
  [ -x "$binary" ] || { echo "build first (scripts/test or cmake --build build)" >&2; exit 2; }
  echo "$binary"
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
# stop_postgres from an EXIT trap.
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
    -o "-k $TIDEMARK_PG_DIR -p $PGPORT -c listen_addresses='' -c fsync=off -c max_connections=200" >/dev/null ||
    { cat "$TIDEMARK_PG_DIR/server.log" >&2; return 1; }
}

stop_postgres() {
  [ -n "${TIDEMARK_PG_DIR:-}" ] && [ -d "$TIDEMARK_PG_DIR" ] || return 0
  as_pg_owner "$(pg_bin)/pg_ctl" -D "$TIDEMARK_PG_DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$TIDEMARK_PG_DIR"
}

# Starts a streaming hot standby of the server start_postgres started, so
# tests can read a source that is in recovery: pg_basebackup -R over the
# primary's socket (initdb's pg_hba trusts local replication), its own temp
# folder and socket, port PGPORT+1 unless TIDEMARK_STANDBY_PORT is set.
# Returns once it accepts connections and is in recovery. Exports
# TIDEMARK_STANDBY_HOST, TIDEMARK_STANDBY_PORT, TIDEMARK_STANDBY_DIR and
# TIDEMARK_STANDBY_SLOT (its replication slot on the primary). Call
# stop_standby from an EXIT trap, before stop_postgres.
start_standby() {
  : "${TIDEMARK_PG_DIR:?start_postgres first}"
  local bin
  bin=$(pg_bin)
  TIDEMARK_STANDBY_DIR=$(mktemp -d /tmp/tidemark-standby.XXXXXX)
  chmod 755 "$TIDEMARK_STANDBY_DIR"
  [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$TIDEMARK_STANDBY_DIR"
  TIDEMARK_STANDBY_SLOT=tidemark_standby_$$
  export TIDEMARK_STANDBY_DIR TIDEMARK_STANDBY_SLOT
  export TIDEMARK_STANDBY_HOST=$TIDEMARK_STANDBY_DIR TIDEMARK_STANDBY_PORT=${TIDEMARK_STANDBY_PORT:-$((PGPORT + 1))}
  log "starting a hot standby in $TIDEMARK_STANDBY_DIR"
  # A fresh cluster is a few tens of MB: a fast checkpoint and no fsync keep
  # the copy to about a second. The slot keeps the primary's WAL until the
  # standby has it, so a burst of test writes cannot outrun it.
  as_pg_owner "$bin/pg_basebackup" -h "$PGHOST" -p "$PGPORT" -U postgres -D "$TIDEMARK_STANDBY_DIR/data" \
    -R -X stream -C -S "$TIDEMARK_STANDBY_SLOT" --checkpoint=fast --no-sync >"$TIDEMARK_STANDBY_DIR/basebackup.log" 2>&1 ||
    { cat "$TIDEMARK_STANDBY_DIR/basebackup.log" >&2; return 1; }
  # max_connections must not be below the primary's, or recovery refuses to start.
  as_pg_owner "$bin/pg_ctl" -D "$TIDEMARK_STANDBY_DIR/data" -l "$TIDEMARK_STANDBY_DIR/server.log" -w -t 60 start \
    -o "-k $TIDEMARK_STANDBY_DIR -p $TIDEMARK_STANDBY_PORT -c listen_addresses='' -c fsync=off -c max_connections=200 -c hot_standby=on" \
    >/dev/null || { cat "$TIDEMARK_STANDBY_DIR/server.log" >&2; return 1; }
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
  as_pg_owner "$(pg_bin)/pg_ctl" -D "$TIDEMARK_STANDBY_DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
  # A primary that outlives its standby would otherwise keep WAL for its
  # slot; the slot stays active until the walsender notices the standby left.
  local active _
  for _ in $(seq 1 25); do
    active=$(psql -X -At -d postgres -c "select active from pg_replication_slots
                                         where slot_name = '$TIDEMARK_STANDBY_SLOT'" 2>/dev/null) || break
    case "$active" in
      "") break ;;
      f) psql -X -q -d postgres -c "select pg_drop_replication_slot('$TIDEMARK_STANDBY_SLOT')" >/dev/null 2>&1 || true
         break ;;
    esac
    sleep 0.2
  done
  rm -rf "$TIDEMARK_STANDBY_DIR"
}
