#!/usr/bin/env bash
# Measures a first load and an upsert re-read of N rows against bare COPY
# between the same two databases. Starts its own throwaway PostgreSQL.
#   ROWS=1000000 bench/first_load.sh
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../scripts/lib/common.sh
source "$(dirname "$0")/../scripts/lib/common.sh"
ROWS=${ROWS:-1000000}
tidemark=$(built_tidemark)

export PGPORT=${PGPORT:-55499}
trap stop_postgres EXIT
start_postgres
createdb bench_source
createdb bench_target
table_ddl="(order_id bigint primary key, customer_id bigint, status text, amount numeric(12,2), updated_at timestamptz not null)"
psql -X -q -d bench_source -c "create table public.orders $table_ddl" \
  -c "insert into public.orders select g, g % 5000, (array['new','paid','completed'])[1 + g % 3], (g % 10000) / 100.0,
        now() - interval '30 days' + g * (interval '30 days' / $ROWS) from generate_series(1, $ROWS) g" \
  -c "vacuum analyze public.orders"
psql -X -q -d bench_target -c "create schema raw" -c "create table raw.orders $table_ddl" -c "create table raw.copy_only $table_ddl"

dir=$(mktemp -d)
trap 'rm -rf "$dir"; stop_postgres' EXIT
mkdir "$dir/pipelines"
cat >"$dir/tidemark.yaml" <<YAML
state: target
connections:
  source: { dsn: "host=$PGHOST port=$PGPORT dbname=bench_source" }
  target: { dsn: "host=$PGHOST port=$PGPORT dbname=bench_target" }
log: { level: warn }
YAML
cat >"$dir/pipelines/bench.yaml" <<YAML
pipeline: bench
source: source
target: target
schedule: "@hourly"
tables:
  - name: orders
    source_table: public.orders
    target_table: raw.orders
    key: [order_id]
    cursor: updated_at
    lookback: 31d
YAML
"$tidemark" migrate --config "$dir/tidemark.yaml" >/dev/null

seconds() { local start=$EPOCHREALTIME; "$@" >/dev/null; seconds_since "$start"; }

copy_only() {
  psql -X -q -d bench_source -c "copy (select * from public.orders) to stdout" |
    psql -X -q -d bench_target -c "copy raw.copy_only from stdin"
}
bare=$(seconds copy_only)
first=$(seconds "$tidemark" run bench --config "$dir/tidemark.yaml")
# lookback 31d: the second run re-reads every row through the upsert; none changed.
reread=$(seconds "$tidemark" run bench --config "$dir/tidemark.yaml")
psql -X -q -d bench_source -c "update public.orders set status = 'refunded', updated_at = clock_timestamp() where order_id % 10 = 0"
# Rows stamped within the last second wait for a later run (the safe
# horizon's margin, docs/engine.md): let every changed row be due.
sleep 1.1
changed=$(seconds "$tidemark" run bench --config "$dir/tidemark.yaml")
refunded=$(psql -X -At -d bench_target -c "select count(*) from raw.orders where status = 'refunded'")
[ "$refunded" = "$((ROWS / 10))" ] || { echo "the changed run loaded $refunded changed rows, expected $((ROWS / 10))" >&2; exit 1; }

loaded=$(psql -X -At -d bench_target -c "select count(*) from raw.orders")
[ "$loaded" = "$ROWS" ] || { echo "loaded $loaded rows, expected $ROWS" >&2; exit 1; }
printf 'rows: %s\n' "$ROWS"
printf 'bare COPY source -> target (psql | psql): %.2f s\n' "$bare"
printf 'tidemark first load (empty target, COPY straight in): %.2f s (%.0f rows/s)\n' "$first" "$(awk -v r="$ROWS" -v s="$first" 'BEGIN { print r / s }')"
printf 'tidemark re-read of every row, none changed (upsert): %.2f s\n' "$reread"
printf 'tidemark re-read with 10%% of rows changed (upsert): %.2f s\n' "$changed"
