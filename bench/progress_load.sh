#!/usr/bin/env bash
# What an operator sees of a long first load: `tidemark run` of ROWS rows
# on a terminal (under script(1)), each redraw of its progress line
# timestamped, and `tidemark status` from another shell every second
# while it runs. Prints the largest gap between two redraws, the number
# of redraws, how many status calls showed rows so far (and the first
# and last of them), and the load's wall time. Starts its own throwaway
# PostgreSQL.
#   ROWS=10000000 bench/progress_load.sh
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
ROWS=${ROWS:-10000000}
tidemark=$(built_tidemark)
command -v script >/dev/null || { echo "script(1) is needed (bsdutils)" >&2; exit 2; }

bench_start
bench_orders
bench_daemon_file "$dir/tidemark.yaml" bench_source bench_target
bench_pipeline orders 'key: [order_id]' 'cursor: updated_at'
"$tidemark" migrate --config "$dir/tidemark.yaml" >/dev/null

# The run on a pseudo-terminal; its bytes, each line drawn timestamped
# as it arrives (a redraw starts with a carriage return).
start=$EPOCHREALTIME
script -qfec "$tidemark run bench --config $dir/tidemark.yaml" /dev/null 2>&1 |
  perl -MTime::HiRes=time -e '$| = 1; $/ = "\r"; while (<STDIN>) { printf "%.3f %s\n", time, $_ =~ s/[\r\n]|\e\[K//gr }' \
    >"$dir/terminal" &
run=$!
: >"$dir/status"
while kill -0 "$run" 2>/dev/null; do
  "$tidemark" status --json --config "$dir/tidemark.yaml" 2>/dev/null |
    python3 -c 'import json, sys; r = json.load(sys.stdin)[0]["last_run"] or {}; print(r.get("rows_so_far", "-"))' \
      >>"$dir/status" || true
  sleep 1
done
wait "$run" || true
elapsed=$(seconds_since "$start")

redraws=$(grep -c "rows/s" "$dir/terminal" || true)
gap=$(awk '/rows\/s/ { if (last) { d = $1 - last; if (d > max) max = d } last = $1 } END { printf "%.2f", max }' "$dir/terminal")
shown=$(grep -c '^[0-9]' "$dir/status" || true)
echo "$ROWS rows, first load in $elapsed s (under script, status beside it)"
echo "progress line: $redraws redraws, largest gap between two: $gap s; the first and the last:"
grep "rows/s" "$dir/terminal" | sed -n '1p;$p' | cut -d' ' -f2-
echo "status from another shell: $shown of $(wc -l <"$dir/status") calls showed rows so far:" \
  "$(grep '^[0-9]' "$dir/status" | head -n 1) ... $(grep '^[0-9]' "$dir/status" | tail -n 1)"
