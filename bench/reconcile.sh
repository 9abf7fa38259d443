#!/usr/bin/env bash
# Measures `tidemark reconcile` of N rows with 0.1 % differences (half the
# differing keys deleted in the source, half removed from the target below
# the watermark) against the naive full key diff: every key of both sides
# copied out with psql, sorted and compared with comm. Time and peak RSS
# (GNU time's maximum resident set of the command and its children).
# Starts its own throwaway PostgreSQL.
#   ROWS=1000000 bench/reconcile.sh
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
ROWS=${ROWS:-1000000}
tidemark=$(built_tidemark)
[ -x /usr/bin/time ] || { echo "GNU time is needed (apt-get install time)" >&2; exit 1; }

bench_start
bench_orders

bench_daemon_file "$dir/tidemark.yaml" bench_source bench_target
bench_pipeline orders 'key: [order_id]' 'cursor: updated_at' 'deletes: { reconcile: "0 3 * * *" }'
"$tidemark" run bench --config "$dir/tidemark.yaml" >/dev/null
psql -X -q -d bench_target -c "vacuum analyze raw.orders"

# 0.1 % of the keys differ: half deleted in the source, half removed from
# the target (all below the watermark, which the load set to about now).
differing=$((ROWS / 1000))
half=$((differing / 2))
psql -X -q -d bench_source -c "delete from public.orders where order_id % 2000 = 2 and order_id <= $((half * 2000))"
psql -X -q -d bench_target -c "delete from raw.orders where order_id % 2000 = 1 and order_id <= $((half * 2000))"
watermark=$(psql -X -At -d bench_target -c "select value from tidemark.watermarks where table_name = 'orders'")

# measure ID LABEL COMMAND...: runs it under GNU time (its output in
# $dir/out.ID); prints seconds and peak RSS in MiB.
measure() {
  local id=$1 label=$2
  shift 2
  /usr/bin/time -v -o "$dir/time.$id" "$@" >"$dir/out.$id"
  local elapsed rss
  elapsed=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s }' "$dir/time.$id")
  rss=$(awk -F': ' '/Maximum resident set size/ { printf "%.1f", $2 / 1024 }' "$dir/time.$id")
  printf '%-58s %8.2f s %9s MiB\n' "$label" "$elapsed" "$rss"
  sed 's/^/    /' "$dir/out.$id" | head -n 1
}

# The naive diff: all keys of both sides out, sorted, compared; the source's
# with whether they are below the watermark (what "missing" needs).
naive_diff() {
  export LC_ALL=C
  psql -X -q -d bench_source -c "copy (select order_id, updated_at < '$watermark'::timestamptz from public.orders) to stdout" |
    sort -k1,1 >"$dir/source.keys"
  psql -X -q -d bench_target -c "copy (select order_id from raw.orders) to stdout" | sort >"$dir/target.keys"
  cut -f1 "$dir/source.keys" >"$dir/source.only_keys"
  local deleted missing
  deleted=$(comm -13 "$dir/source.only_keys" "$dir/target.keys" | wc -l)
  missing=$(join -t "$(printf '\t')" -v 1 "$dir/source.keys" "$dir/target.keys" | awk -F'\t' '$2 == "t"' | wc -l)
  echo "naive: $deleted deleted, $missing missing"
}
export -f naive_diff
export dir watermark

printf 'rows: %s, differing keys: %s (%s deleted in the source, %s removed from the target)\n' "$ROWS" \
  "$((half * 2))" "$half" "$half"
measure naive "naive full key diff (psql COPY of all keys, sort, comm)" bash -c naive_diff
measure dry "tidemark reconcile --dry-run (compare only)" "$tidemark" reconcile bench --config "$dir/tidemark.yaml" --dry-run
measure fix "tidemark reconcile (compare, delete, copy again)" "$tidemark" reconcile bench --config "$dir/tidemark.yaml"
measure again "tidemark reconcile again (no differences left)" "$tidemark" reconcile bench --config "$dir/tidemark.yaml"

# Reconcile makes the keys below the watermark equal. A row stamped after
# the first load's hi (a horizon held back by autovacuum's transaction,
# say) is the next load's, not a missing one.
below="where updated_at < '$watermark'::timestamptz"
source_rows=$(psql -X -At -d bench_source -c "select count(*) from public.orders $below")
target_rows=$(psql -X -At -d bench_target -c "select count(*) from raw.orders $below")
[ "$source_rows" = "$target_rows" ] || { echo "after reconcile: source $source_rows rows, target $target_rows" >&2; exit 1; }
grep -q "$half rows deleted, $half missing" "$dir/out.fix" ||
  { echo "reconcile did not report $half deleted and $half missing" >&2; exit 1; }
echo "source and target hold the same $source_rows keys below the watermark"
