#!/usr/bin/env bash
# The first changed snapshot after a first load, against the unchanged
# snapshot, and against the build before it (OLD, optional): ROWS rows,
# ROUNDS rounds, each a first load into an emptied target (its stored
# horizon removed), RATE percent of the rows changed, the first changed
# run timed, then an unchanged run timed. Each tool in turn per round;
# medians. Starts its own throwaway PostgreSQL.
#   ROWS=1000000 ROUNDS=3 RATE=1 OLD=/tmp/old/tidemark bench/first_change.sh
set -euo pipefail
shopt -s inherit_errexit
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
ROWS=${ROWS:-1000000}
ROUNDS=${ROUNDS:-3}
RATE=${RATE:-1}
OLD=${OLD:-}
tidemark=$(built_tidemark)

bench_start
bench_orders
bench_daemon_file "$dir/tidemark.yaml" bench_source bench_target
bench_pipeline orders 'mode: snapshot' 'key: [order_id]'
"$tidemark" migrate --config "$dir/tidemark.yaml" >/dev/null

# first_load BINARY: the target emptied, no horizon stored, then a run.
first_load() {
  psql -X -q -d bench_target -c "truncate raw.orders" -c "delete from tidemark.snapshot_horizons" -c "vacuum raw.orders"
  "$1" run bench --config "$dir/tidemark.yaml" >/dev/null
}
change() {
  local per
  per=$(awk -v r="$RATE" 'BEGIN { printf "%d", r * 1000 }')
  psql -X -q -d bench_source -c "update public.orders set amount = amount + 1 where order_id % 100000 < $per"
}
# timed BINARY: its run's seconds, and in $how the path it took.
timed() {
  local start=$EPOCHREALTIME out
  out=$("$1" run bench --config "$dir/tidemark.yaml")
  t=$(seconds_since "$start")
  case $out in
    *"rows written since the last snapshot"*) how=recent ;;
    *"diff:"*) how="diff" ;;
    *unchanged*) how=unchanged ;;
    *) how=whole ;;
  esac
}

tools=(new)
[ -z "$OLD" ] || tools+=(old)
declare -A changed=() unchanged=() paths=()
for round in $(seq 1 "$ROUNDS"); do
  for i in "${!tools[@]}"; do
    tool=${tools[$(((i + round) % ${#tools[@]}))]}
    binary=$tidemark
    [ "$tool" = new ] || binary=$OLD
    first_load "$binary"
    change
    timed "$binary"
    changed[$tool]="${changed[$tool]:-} $t"
    paths[$tool]="${paths[$tool]:-} $how"
    timed "$binary"
    unchanged[$tool]="${unchanged[$tool]:-} $t"
  done
done
for tool in "${tools[@]}"; do
  # shellcheck disable=SC2086
  c=$(median ${changed[$tool]})
  # shellcheck disable=SC2086
  u=$(median ${unchanged[$tool]})
  printf '%s: first changed run (%s%%) %.2f s (%s; paths:%s), unchanged %.2f s (%s): %.2fx\n' "$tool" "$RATE" "$c" \
    "${changed[$tool]# }" "${paths[$tool]}" "$u" "${unchanged[$tool]# }" "$(awk -v a="$c" -v b="$u" 'BEGIN { print a / b }')"
done
