#!/usr/bin/env bash
# What a snapshot run of a changed table costs with the row diff, against
# the unchanged snapshot, the build before it (OLD, optional: a tidemark
# binary whose changed snapshot crosses the whole table) and
# pg_comparator's --synchronize --do-it, on the same table in the same
# run: ROWS rows loaded once, then for each rate in RATES (percent of the
# rows, spread uniformly) ROUNDS rounds in which each tool in turn syncs
# the target after that many rows changed (the order rotating from round
# to round). Medians. Then, once per rate, the bytes the source sent
# (counted by bench/byte_relay.py between tidemark and the source) and
# tidemark's peak RSS; the target is checked equal to the source.
# Starts its own throwaway PostgreSQL.
#   ROWS=1000000 ROUNDS=3 RATES="0.1 1 10" OLD=/tmp/old/tidemark bench/snapshot_diff.sh
set -euo pipefail
shopt -s inherit_errexit  # a tool that fails inside $(seconds ...) ends the benchmark
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
ROWS=${ROWS:-1000000}
ROUNDS=${ROUNDS:-3}
RATES=${RATES:-0.1 1 10}
OLD=${OLD:-}
tidemark=$(built_tidemark)
command -v pg_comparator >/dev/null || {
  echo "pg_comparator is not installed: apt-get install postgresql-comparator" >&2
  exit 2
}

bench_start
bench_orders
columns=customer_id,status,amount,updated_at
for db in bench_source bench_target; do psql -X -q -d "$db" -c "create extension pgcmp"; done
bench_daemon_file "$dir/tidemark.yaml" bench_source bench_target
bench_pipeline orders 'mode: snapshot' 'key: [order_id]'
"$tidemark" migrate --config "$dir/tidemark.yaml" >/dev/null
# The same pipelines, the source reached through the byte counter.
mkdir "$dir/relay"
sed "s|host=$PGHOST port=$PGPORT dbname=bench_source|host=$dir/relay port=$PGPORT dbname=bench_source|" \
  "$dir/tidemark.yaml" >"$dir/relayed.yaml"

run_new() { "$tidemark" run bench --config "$dir/tidemark.yaml" >/dev/null; }
run_old() { "$OLD" run bench --config "$dir/tidemark.yaml" >/dev/null; }
run_comparator() {
  pg_comparator --synchronize --do-it \
    "pgsql://$PGUSER@:$PGPORT/bench_source/public.orders?order_id:$columns" \
    "pgsql://$PGUSER@:$PGPORT/bench_target/raw.orders?order_id:$columns" >/dev/null
}
# change RATE: RATE percent of the rows (exactly, for ROWS a multiple of
# 100,000), spread over the table, get a new amount.
change() {
  local per
  per=$(awk -v r="$1" 'BEGIN { printf "%d", r * 1000 }')
  psql -X -q -d bench_source -c "update public.orders set amount = amount + 1 where order_id % 100000 < $per"
}
digest() { psql -X -At -d "$1" -c "select md5(string_agg(o::text, ',' order by order_id)) from $2 o"; }
last() { psql -X -At -d bench_target -c "select rows_written from tidemark.runs order by run_id desc limit 1"; }
# relayed COMMAND...: runs it with the source behind the counter; prints the bytes the source sent.
relayed() {
  python3 "$(dirname "$0")/byte_relay.py" "$dir/relay/.s.PGSQL.$PGPORT" "$PGHOST/.s.PGSQL.$PGPORT" "$dir/bytes" &
  local relay=$!
  while [ ! -S "$dir/relay/.s.PGSQL.$PGPORT" ]; do sleep 0.05; done
  "$@" >/dev/null
  kill "$relay"
  wait "$relay" || true
  rm -f "$dir/relay/.s.PGSQL.$PGPORT"
  cat "$dir/bytes"
}

first=$(seconds run_new)
printf 'rows %s; first snapshot (into an empty target): %.2f s\n' "$ROWS" "$first"
unchanged=()
unchanged_old=()
for _ in $(seq 1 "$ROUNDS"); do
  unchanged+=("$(seconds run_new)")
  [ -z "$OLD" ] || unchanged_old+=("$(seconds run_old)")
done
base=$(median "${unchanged[@]}")
printf 'unchanged snapshot: median %.2f s (%s)\n' "$base" "${unchanged[*]}"
if [ -n "$OLD" ]; then
  old_base=$(median "${unchanged_old[@]}")
  printf 'unchanged snapshot, old: median %.2f s (%s): new / old %.2f\n' "$old_base" "${unchanged_old[*]}" \
    "$(awk -v a="$base" -v b="$old_base" 'BEGIN { print a / b }')"
fi
whole_copy=$(relayed psql -X -q -h "$dir/relay" -d bench_source -c "copy (select * from public.orders) to stdout")
printf 'a whole text COPY of the table: %s bytes from the source\n' "$whole_copy"

tools=(new comparator)
[ -n "$OLD" ] && tools+=(old)
for rate in $RATES; do
  declare -A times=()
  for round in $(seq 1 "$ROUNDS"); do
    for i in "${!tools[@]}"; do
      tool=${tools[$(((i + round) % ${#tools[@]}))]}
      change "$rate"
      case $tool in
        new) t=$(seconds run_new) ;;
        old) t=$(seconds run_old) ;;
        comparator) t=$(seconds run_comparator) ;;
      esac
      times[$tool]="${times[$tool]:-} $t"
    done
  done
  line="$rate% changed:"
  for tool in "${tools[@]}"; do
    # shellcheck disable=SC2086
    m=$(median ${times[$tool]})
    line+=$(printf ' %s %.2f s (%.2fx unchanged);' "$tool" "$m" "$(awk -v a="$m" -v b="$base" 'BEGIN { print a / b }')")
  done
  echo "$line"
  change "$rate"
  bytes=$(relayed "$tidemark" run bench --config "$dir/relayed.yaml")
  written=$(last)
  change "$rate"
  rss=$( { /usr/bin/time -f %M "$tidemark" run bench --config "$dir/tidemark.yaml" >/dev/null; } 2>&1 | tail -1)
  line=$(printf '  new: %s bytes from the source (%.1f%% of the whole COPY), %s rows written, peak RSS %s KiB' \
    "$bytes" "$(awk -v a="$bytes" -v b="$whole_copy" 'BEGIN { print 100 * a / b }')" "$written" "$rss")
  if [ -n "$OLD" ]; then
    change "$rate"
    old_bytes=$(relayed "$OLD" run bench --config "$dir/relayed.yaml")
    line+="; old: $old_bytes bytes"
  fi
  echo "$line"
  [ "$(digest bench_source public.orders)" = "$(digest bench_target raw.orders)" ] ||
    { echo "the target differs from the source after $rate%" >&2; exit 1; }
done
echo "target equal to source after every rate: yes"
