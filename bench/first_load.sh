#!/usr/bin/env bash
# Measures a first load and an upsert re-read of N rows against bare COPY
# between the same two databases: ROUNDS first loads into an emptied
# target, alternating with bare COPY (medians), tidemark's peak resident
# memory during each first load, then the re-reads. Starts its own
# throwaway PostgreSQL. With BASELINE (another tidemark binary, say the
# last release's) its first loads run in the same rounds, into a target
# database of its own, so that the two are compared in one run.
#   ROWS=1000000 ROUNDS=3 [BASELINE=/path/to/tidemark] bench/first_load.sh
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
ROWS=${ROWS:-1000000}
ROUNDS=${ROUNDS:-3}
tidemark=$(built_tidemark)

bench_start
bench_orders
psql -X -q -d bench_target -c "create table raw.copy_only $table_ddl"
baseline=${BASELINE:-}
if [ -n "$baseline" ]; then
  createdb bench_baseline
  psql -X -q -d bench_baseline -c "create schema raw" -c "create table raw.orders $table_ddl"
fi

bench_daemon_file "$dir/tidemark.yaml" bench_source bench_target
[ -z "$baseline" ] || bench_daemon_file "$dir/baseline.yaml" bench_source bench_baseline
bench_pipeline orders 'key: [order_id]' 'cursor: updated_at' 'lookback: 31d'
"$tidemark" migrate --config "$dir/tidemark.yaml" >/dev/null
[ -z "$baseline" ] || "$baseline" migrate --config "$dir/baseline.yaml" >/dev/null

copy_only() {
  psql -X -q -d bench_source -c "copy (select * from public.orders) to stdout" |
    psql -X -q -d bench_target -c "copy raw.copy_only from stdin"
}
# Empty targets and no stored watermark: the next run is a first load.
reset_targets() {
  psql -X -q -d bench_target -c "truncate raw.orders, raw.copy_only" \
    -c "delete from tidemark.watermarks where pipeline = 'bench'" -c "checkpoint"
  [ -z "$baseline" ] || psql -X -q -d bench_baseline -c "truncate raw.orders" \
    -c "delete from tidemark.watermarks where pipeline = 'bench'" -c "checkpoint"
}
# The first load under GNU time: wall seconds and peak resident memory (KiB).
first_load() {
  /usr/bin/time -f %M -o "$dir/rss" "$tidemark" run bench --config "$dir/tidemark.yaml" >/dev/null
}
baseline_load() {
  /usr/bin/time -f %M -o "$dir/baseline_rss" "$baseline" run bench --config "$dir/baseline.yaml" >/dev/null
}

bare_times=()
first_times=()
baseline_times=()
rss=()
for round in $(seq 1 "$ROUNDS"); do
  reset_targets
  if [ $((round % 2)) = 1 ]; then
    first_times+=("$(seconds first_load)")
    bare_times+=("$(seconds copy_only)")
    [ -z "$baseline" ] || baseline_times+=("$(seconds baseline_load)")
  else
    [ -z "$baseline" ] || baseline_times+=("$(seconds baseline_load)")
    bare_times+=("$(seconds copy_only)")
    first_times+=("$(seconds first_load)")
  fi
  rss+=("$(cat "$dir/rss")")
  printf 'round %s: bare COPY %.2f s, tidemark first load %.2f s (%.2fx), peak RSS %s KiB' "$round" \
    "${bare_times[-1]}" "${first_times[-1]}" "$(awk -v b="${bare_times[-1]}" -v t="${first_times[-1]}" 'BEGIN { print b / t }')" \
    "${rss[-1]}"
  [ -z "$baseline" ] || printf ', baseline %.2f s' "${baseline_times[-1]}"
  printf '\n'
done
bare=$(median "${bare_times[@]}")
first=$(median "${first_times[@]}")
peak=$(printf '%s\n' "${rss[@]}" | sort -n | tail -n 1)
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
printf 'rows: %s, rounds: %s\n' "$ROWS" "$ROUNDS"
printf 'median bare COPY source -> target (psql | psql): %.2f s\n' "$bare"
printf 'median tidemark first load (empty target, COPY straight in): %.2f s (%.0f rows/s): %.2fx bare COPY\n' "$first" \
  "$(awk -v r="$ROWS" -v s="$first" 'BEGIN { print r / s }')" "$(awk -v b="$bare" -v t="$first" 'BEGIN { print b / t }')"
printf 'tidemark peak RSS during a first load: %.1f MiB\n' "$(awk -v k="$peak" 'BEGIN { print k / 1024 }')"
printf 'tidemark re-read of every row, none changed (upsert): %.2f s\n' "$reread"
printf 'tidemark re-read with 10%% of rows changed (upsert): %.2f s\n' "$changed"
if [ -n "$baseline" ]; then
  base=$(median "${baseline_times[@]}")
  printf 'median baseline first load: %.2f s: tidemark takes %.1f%% of its time (%.2fx bare COPY)\n' "$base" \
    "$(awk -v t="$first" -v b="$base" 'BEGIN { print 100 * t / b }')" "$(awk -v b="$bare" -v t="$base" 'BEGIN { print b / t }')"
fi
