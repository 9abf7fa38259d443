#!/usr/bin/env bash
# Runs bench/libpqxx_probe.cpp: tidemark's PostgreSQL client paths through
# libpqxx 6.4 against libpq (what a killed session does next, a manual
# transaction across a kill, the raw COPY pass-through and its speed, a
# partition query with $1/$2, error fields, cancellation). The evidence for
# docs/ARCHITECTURE.md's "The PostgreSQL client". libpqxx is no tidemark
# dependency: install libpqxx-dev by hand to run this. Starts its own
# throwaway PostgreSQL.
#   ROWS=1000000 REPEAT=5 bench/libpqxx_probe.sh
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
ROWS=${ROWS:-1000000}
REPEAT=${REPEAT:-5}
pkg-config --exists libpqxx || { echo "libpqxx-dev is not installed (apt-get install libpqxx-dev)" >&2; exit 2; }

bench_start
bench_orders
probe=$dir/libpqxx_probe
# shellcheck disable=SC2046 # pkg-config's flags are words
g++ -std=c++17 -O2 -Wall -o "$probe" "$TIDEMARK_ROOT/bench/libpqxx_probe.cpp" $(pkg-config --cflags --libs libpqxx libpq)

source_dsn="host=$PGHOST port=$PGPORT dbname=bench_source"
target_dsn="host=$PGHOST port=$PGPORT dbname=bench_target"

printf 'libpqxx %s (Debian package %s), libpq %s, %s rows\n' "$(pkg-config --modversion libpqxx)" \
  "$(dpkg-query -W -f='${Version}' libpqxx-dev 2>/dev/null || echo '?')" "$(pkg-config --modversion libpq)" "$ROWS"

for mode in after-kill after-kill-inhibited killed-in-transaction killed-in-transaction-inhibited; do
  echo "== $mode"
  "$probe" "$mode" "$target_dsn"
done

echo "== raw COPY pass-through, $ROWS rows, alternating (wall and client CPU seconds)"
"$probe" copy-libpqxx-stream "$source_dsn" "$target_dsn"
for _ in $(seq "$REPEAT"); do
  for mode in copy-libpq copy-libpqxx; do
    /usr/bin/time -f "    client CPU: user %U s, system %S s" "$probe" "$mode" "$source_dsn" "$target_dsn" 2>&1
  done
done

# Bounds of one day (about ROWS / 30 rows) and of every row.
day_lo=$(psql -X -At -d bench_source -c "select to_char(date_trunc('day', max(updated_at) - interval '10 days')
  at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') from orders")
day_hi=$(psql -X -At -d bench_source -c "select to_char(date_trunc('day', max(updated_at) - interval '9 days')
  at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') from orders")
# tidemark's wrapper around a partition query (docs/partitions.md).
# shellcheck disable=SC2016 # $1 and $2 are the query's parameters
wrapped() {
  printf 'select q.*, coalesce(q."%s" >= $1 and q."%s" < $2, false) from (\n%s\n) q' "$1" "$1" "$2"
}
partition() {
  echo "== partition query: $2"
  local query
  query=$(wrapped "$1" "$2")
  "$probe" partition-libpq "$source_dsn" "$query" "$3" "$4"
  "$probe" partition-libpqxx "$source_dsn" "$query" "$3" "$4"
}
# shellcheck disable=SC2016 # $1 and $2 are the query's parameters
{
  partition day_start 'select $1::timestamptz as day_start, count(*) as orders, sum(amount) as revenue from orders where updated_at >= $1 and updated_at < $2 and status = '"'completed'" "$day_lo" "$day_hi"
  partition day_start 'select $1 as day_start, count(*) as orders from orders where updated_at >= $1 and updated_at < $2' "$day_lo" "$day_hi"
  partition day_start 'select date_trunc('"'day'"', $1) as day_start, count(*) as orders from orders where updated_at >= $1 and updated_at < $2' "$day_lo" "$day_hi"
  partition hour_start 'select h as hour_start, count(o.order_id) as orders from generate_series($1, $2 - interval '"'1 hour'"', interval '"'1 hour'"') h left join orders o on o.updated_at >= h and o.updated_at < h + interval '"'1 hour'"' group by h' "$day_lo" "$day_hi"
  partition updated_at 'select * from orders where updated_at >= $1 and updated_at < $2' 2000-01-01T00:00:00Z 2100-01-01T00:00:00Z
}

echo "== errors"
"$probe" errors "$target_dsn"
echo "== cancel a COPY after 1,000 rows"
"$probe" cancel "$source_dsn"
