#!/usr/bin/env bash
# What a snapshot run of an unchanged table costs, against a bare COPY of
# the same table to /dev/null: ROWS rows loaded once by a first snapshot,
# then ROUNDS rounds alternating a snapshot run (`tidemark run`, nothing
# changed in the source) with `psql -c "copy (select * from t) to stdout"
# > /dev/null` (medians). Each snapshot run must write nothing: 0 rows
# written in its run row, every target row still the same tuple, and no
# new dead tuple. Then one run after UPDATE_PERCENT of the rows changed.
# Starts its own throwaway PostgreSQL.
#   ROWS=1000000 ROUNDS=5 bench/snapshot.sh
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
ROWS=${ROWS:-1000000}
ROUNDS=${ROUNDS:-5}
UPDATE_PERCENT=${UPDATE_PERCENT:-1}
tidemark=$(built_tidemark)

bench_start
bench_orders
bench_daemon_file "$dir/tidemark.yaml" bench_source bench_target
bench_pipeline orders 'mode: snapshot' 'key: [order_id]'
"$tidemark" migrate --config "$dir/tidemark.yaml" >/dev/null
snapshot_run() { "$tidemark" run bench --config "$dir/tidemark.yaml" >/dev/null; }
bare_copy() { psql -X -q -d bench_source -c "copy (select * from public.orders) to stdout" >/dev/null; }
target() { psql -X -At -d bench_target -c "$1"; }
tuples() { target "select md5(string_agg(ctid::text || xmin::text, ',' order by order_id)) from raw.orders"; }
dead() { target "select n_dead_tup from pg_stat_user_tables where relid = 'raw.orders'::regclass"; }
last_written() { target "select rows_written from tidemark.runs order by run_id desc limit 1"; }

first=$(seconds snapshot_run)
printf 'first snapshot (into an empty target): %.2f s, %s rows written\n' "$first" "$(last_written)"
target "vacuum raw.orders" >/dev/null
sleep 1
before_tuples=$(tuples)
before_dead=$(dead)
snapshot_times=()
bare_times=()
for round in $(seq 1 "$ROUNDS"); do
  if [ $((round % 2)) = 1 ]; then
    snapshot_times+=("$(seconds snapshot_run)")
    bare_times+=("$(seconds bare_copy)")
  else
    bare_times+=("$(seconds bare_copy)")
    snapshot_times+=("$(seconds snapshot_run)")
  fi
  printf 'round %s: bare COPY %.2f s, unchanged snapshot %.2f s (%.2fx), %s rows written\n' "$round" \
    "${bare_times[-1]}" "${snapshot_times[-1]}" \
    "$(awk -v b="${bare_times[-1]}" -v t="${snapshot_times[-1]}" 'BEGIN { print t / b }')" "$(last_written)"
done
sleep 1
after_tuples=$(tuples)
after_dead=$(dead)
bare=$(median "${bare_times[@]}")
snap=$(median "${snapshot_times[@]}")
printf 'median: bare COPY to /dev/null %.2f s, unchanged snapshot %.2f s: %.2fx\n' "$bare" "$snap" \
  "$(awk -v b="$bare" -v t="$snap" 'BEGIN { print t / b }')"
echo "target tuples unchanged: $([ "$before_tuples" = "$after_tuples" ] && echo yes || echo NO)," \
  "dead tuples before $before_dead, after $after_dead"

psql -X -q -d bench_source -c "update public.orders set amount = amount + 1 where order_id % 100 < $UPDATE_PERCENT"
changed=$(seconds snapshot_run)
printf 'after %s%% of the rows changed: %.2f s, %s rows written\n' "$UPDATE_PERCENT" "$changed" "$(last_written)"
