#!/usr/bin/env bash
# One big table's first load against bare binary COPY pipes into the same
# table shape (bigint key, bigint, text, numeric(12,2), timestamptz; the
# target with its primary key; the source's cursor indexed), side by side
# in one run: ROUNDS rounds,
# each emptying every target before each load, the order of the loads
# rotating. Measured: a bare binary pipe (psql | psql), two bare binary
# pipes over the two halves of the table's CTID range at once (the limit
# two workers can reach here), and tidemark's first load as an incremental
# table and as a snapshot table, each into an existing target and into one
# `create_target` makes, and as a snapshot table in resumable ranges of
# RANGE_SIZE read by each of WORKERS workers (docs/engine.md, "Ranged
# first loads"); medians, each against the one binary pipe, and
# tidemark's peak resident memory. Starts its own throwaway PostgreSQL.
#   ROWS=10000000 ROUNDS=3 RANGE_SIZE=64MB WORKERS="1 2 4 8" bench/parallel_load.sh [TIDEMARK_BINARY]
set -euo pipefail
shopt -s inherit_errexit  # a load that fails inside $(seconds ...) ends the benchmark
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
ROWS=${ROWS:-10000000}
ROUNDS=${ROUNDS:-3}
RANGE_SIZE=${RANGE_SIZE:-64MB}
read -r -a workers <<<"${WORKERS:-1 2 4 8}"
tidemark=${1:-${TIDEMARK_BIN:-$(built_tidemark)}}
[ -x "$tidemark" ] || { echo "no tidemark binary at $tidemark" >&2; exit 2; }

bench_start
bench_orders
# The incremental table's cursor indexed, as it should be: its least
# value, where a first load starts, is then read from the index.
psql -X -q -d bench_source -c "create index on public.orders (updated_at)" -c "analyze public.orders"
psql -X -q -d bench_target -c "create table raw.pipe $table_ddl" -c "create table raw.ranges $table_ddl" \
  -c "create table raw.orders_snapshot $table_ddl"
ranged=()
for w in "${workers[@]}"; do
  ranged+=("ranged_$w")
  psql -X -q -d bench_target -c "create table raw.orders_ranged_$w $table_ddl"
done
bench_daemon_file "$dir/tidemark.yaml" bench_source bench_target
cat >"$dir/pipelines/bench.yaml" <<YAML
pipeline: bench
source: source
target: target
schedule: "@hourly"
tables:
  - { name: incremental, source_table: public.orders, target_table: raw.orders, key: [order_id], cursor: updated_at }
  - { name: snapshot, mode: snapshot, source_table: public.orders, target_table: raw.orders_snapshot, key: [order_id] }
  - { name: incremental_created, source_table: public.orders, target_table: raw.orders_created, key: [order_id],
      cursor: updated_at, create_target: true }
  - { name: snapshot_created, mode: snapshot, source_table: public.orders, target_table: raw.orders_created_snapshot,
      key: [order_id], create_target: true }
YAML
for w in "${workers[@]}"; do
  cat >>"$dir/pipelines/bench.yaml" <<YAML
  - { name: ranged_$w, mode: snapshot, source_table: public.orders, target_table: raw.orders_ranged_$w,
      key: [order_id], ranges: { above: 0B, size: $RANGE_SIZE, workers: $w } }
YAML
done
"$tidemark" migrate --config "$dir/tidemark.yaml" >/dev/null

# The heap's pages in two halves: every row's CTID falls in one of them.
pages=$(psql -X -At -d bench_source -c "select pg_relation_size('public.orders') / current_setting('block_size')::int")
half=$(((pages + 1) / 2))
binary_pipe() {  # binary_pipe TARGET_TABLE [WHERE]
  psql -X -q -d bench_source -c "copy (select * from public.orders ${2:-}) to stdout (format binary)" |
    psql -X -q -d bench_target -c "copy $1 from stdin (format binary)"
}
one_pipe() { binary_pipe raw.pipe; }
two_pipes() {
  binary_pipe raw.ranges "where ctid < '($half,0)'::tid" &
  binary_pipe raw.ranges "where ctid >= '($half,0)'::tid"
  wait
}
# A first load of one table under GNU time, its peak resident memory kept.
load() {
  /usr/bin/time -f %M -o "$dir/rss.$1" "$tidemark" run bench --table "$1" --config "$dir/tidemark.yaml" >"$dir/run.log" 2>&1 ||
    { cat "$dir/run.log" >&2; return 1; }
}
incremental() { load incremental; }
snapshot() { load snapshot; }
incremental_created() { load incremental_created; }
snapshot_created() { load snapshot_created; }
for w in "${workers[@]}"; do eval "ranged_$w() { load ranged_$w; }"; done
# Every target empty (the created ones gone) and no watermark: each load is a first load.
reset_targets() {
  psql -X -q -d bench_target -c "set client_min_messages = warning" \
    -c "truncate raw.pipe, raw.ranges, raw.orders, raw.orders_snapshot$(printf ', raw.orders_%s' "${ranged[@]}")" \
    -c "drop table if exists raw.orders_created, raw.orders_created_snapshot" \
    -c "delete from tidemark.watermarks where pipeline = 'bench'" -c "checkpoint"
}

loads=(one_pipe two_pipes incremental snapshot incremental_created snapshot_created "${ranged[@]}")
declare -A times=() peak=()
for round in $(seq 1 "$ROUNDS"); do
  # Each round starts one further along the list, so that none always goes first.
  for i in "${!loads[@]}"; do
    name=${loads[$(((i + round - 1) % ${#loads[@]}))]}
    reset_targets
    times[$name]+=" $(seconds "$name")"
    if [ -f "$dir/rss.$name" ]; then
      rss=$(cat "$dir/rss.$name")
      [ "${peak[$name]:-0}" -ge "$rss" ] || peak[$name]=$rss
    fi
  done
  echo "round $round done"
done

# Each of tidemark's loads once more, its target then checked against the source.
digest() { psql -X -At -d "$1" -c "select count(*), md5(string_agg(o::text, ',' order by order_id)) from $2 o"; }
source_digest=$(digest bench_source public.orders)
reset_targets
for name in incremental snapshot incremental_created snapshot_created "${ranged[@]}"; do "$name"; done
for table in orders orders_snapshot orders_created orders_created_snapshot $(printf 'orders_%s ' "${ranged[@]}"); do
  [ "$(digest bench_target "raw.$table")" = "$source_digest" ] || { echo "raw.$table differs from the source" >&2; exit 1; }
done
# shellcheck disable=SC2086
pipe=$(median ${times[one_pipe]})
printf 'rows %s, %s rounds, %s heap pages; speed against one binary COPY pipe (its time / the load'"'"'s)\n' \
  "$ROWS" "$ROUNDS" "$pages"
printf '%-22s %9s %9s  %s\n' load median speed "rounds (s); peak RSS"
for name in "${loads[@]}"; do
  # shellcheck disable=SC2086
  m=$(median ${times[$name]})
  printf '%-22s %8.2fs %8.3fx  %s' "$name" "$m" "$(awk -v p="$pipe" -v m="$m" 'BEGIN { print p / m }')" "${times[$name]# }"
  [ -z "${peak[$name]:-}" ] || printf '; %s MiB' "$((peak[$name] / 1024))"
  printf '\n'
done
