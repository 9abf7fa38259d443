# shellcheck shell=bash
# Shared by the benchmarks (source it): each starts a throwaway PostgreSQL
# of its own, on a port of its own, so that any two can run side by side;
# a scratch folder $dir; the daemon file for a source and a target
# database; the median of a list and the time a command takes.
# shellcheck source-path=SCRIPTDIR source=../scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib/common.sh"

bench_cleanups=()

# PGPORT, unless set, a port taken from this process's id: two benchmarks
# never share one.
bench_port() { export PGPORT=${PGPORT:-$((41000 + $$ % 20000))}; }

# Starts PostgreSQL (on bench_port) and makes $dir; both go on exit,
# after what bench_on_exit added.
bench_start() {
  bench_port
  dir=$(mktemp -d /tmp/tidemark-bench.XXXXXX)
  mkdir "$dir/pipelines"
  trap bench_stop EXIT
  start_postgres
}

# bench_on_exit COMMAND: runs COMMAND (eval'd) on exit, before the server stops.
bench_on_exit() { bench_cleanups+=("$1"); }

bench_stop() {
  local cleanup
  for cleanup in "${bench_cleanups[@]}"; do eval "$cleanup" || true; done
  rm -rf "$dir"
  stop_postgres
}

# bench_daemon_file FILE SOURCE_DB TARGET_DB [LINE...]: a daemon file with
# connections source and target (the state in the target), warnings only
# in the log, then the lines given.
bench_daemon_file() {
  local file=$1 source_db=$2 target_db=$3
  shift 3
  {
    echo "state: target"
    echo "connections:"
    echo "  source: { dsn: \"host=$PGHOST port=$PGPORT dbname=$source_db\" }"
    echo "  target: { dsn: \"host=$PGHOST port=$PGPORT dbname=$target_db\" }"
    echo "log: { level: warn }"
    [ $# -eq 0 ] || printf '%s\n' "$@"
  } >"$file"
}

# bench_pipeline TABLE [LINE...]: $dir/pipelines/bench.yaml, pipeline
# bench from source to target, hourly, with the one table TABLE (public.TABLE
# into raw.TABLE), the lines given (its keys, each "key: value") added to it.
bench_pipeline() {
  local table=$1
  shift
  {
    printf 'pipeline: bench\nsource: source\ntarget: target\nschedule: "@hourly"\ntables:\n'
    printf '  - name: %s\n    source_table: public.%s\n    target_table: raw.%s\n' "$table" "$table" "$table"
    printf '    %s\n' "$@"
  } >"$dir/pipelines/bench.yaml"
}

# The orders table of the load benchmarks, its columns in $table_ddl:
# public.orders of bench_source with ROWS rows stamped over the last 30
# days, and an empty raw.orders in bench_target. Both databases are
# created here.
bench_orders() {
  createdb bench_source
  createdb bench_target
  table_ddl="(order_id bigint primary key, customer_id bigint, status text, amount numeric(12,2), updated_at timestamptz not null)"
  psql -X -q -d bench_source -c "create table public.orders $table_ddl" \
    -c "insert into public.orders select g, g % 5000, (array['new','paid','completed'])[1 + g % 3], (g % 10000) / 100.0,
          now() - interval '30 days' + g * (interval '30 days' / $ROWS) from generate_series(1, $ROWS) g" \
    -c "vacuum analyze public.orders"
  psql -X -q -d bench_target -c "create schema raw" -c "create table raw.orders $table_ddl"
}

# The median of the numbers given as arguments.
median() {
  printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# seconds COMMAND...: runs it (output dropped) and prints the wall seconds it took.
seconds() {
  local start=$EPOCHREALTIME
  "$@" >/dev/null
  seconds_since "$start"
}

# bench_many_tables_db: database bench with the tables of a many-table
# daemon: one source s.t (a row a day old) and the hundred targets
# r.t1..r.t100 that each pipeline file reuses.
bench_many_tables_db() {
  createdb bench
  psql -X -q -d bench -c "create schema s" -c "create schema r" \
    -c "create table s.t (id bigint primary key, updated_at timestamptz not null)" \
    -c "insert into s.t values (1, now() - interval '1 day')" \
    -c "do \$\$ begin for i in 1..100 loop
          execute format('create table r.%I (id bigint primary key, updated_at timestamptz not null)', 't' || i);
        end loop; end \$\$"
}

# bench_many_tables_daemon_file FILE PORT [LINE...]: the daemon file over
# that database (connection db, the state in it too), metrics on PORT,
# the lines given added.
bench_many_tables_daemon_file() {
  local file=$1 port=$2
  shift 2
  {
    echo "state: db"
    echo "connections:"
    echo "  db: { dsn: \"host=$PGHOST port=$PGPORT dbname=bench\" }"
    echo "metrics: { listen: \"127.0.0.1:$port\" }"
    echo "log: { level: warn }"
    [ $# -eq 0 ] || printf '%s\n' "$@"
  } >"$file"
}

# bench_many_pipelines DIR N SCHEDULE [KEYS]: N tables in DIR, 100 per
# pipeline file p1, p2, ... (connection db), each loading s.t into one of
# r.t1..r.t100 on SCHEDULE, with KEYS (", lookback: 1h") added.
bench_many_pipelines() {
  awk -v n="$2" -v schedule="$3" -v keys="${4:-}" -v out="$1" 'BEGIN {
    for (p = 1; p <= int((n + 99) / 100); p++) {
      f = out "/p" p ".yaml"
      printf "pipeline: p%d\nsource: db\ntarget: db\nschedule: \"%s\"\ntables:\n", p, schedule > f
      for (t = 1; t <= 100 && (p - 1) * 100 + t <= n; t++)
        printf "  - { name: t%d, source_table: s.t, target_table: r.t%d, key: [id], cursor: updated_at%s }\n", t, t, keys > f
      close(f)
    }
  }'
}
