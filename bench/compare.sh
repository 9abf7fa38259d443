#!/usr/bin/env bash
# Two tidemark builds side by side on the same data, in one run, so that
# a loss of a few percent shows above the machine's own drift: the first
# load, the steady state (10 % of the rows changed and 1 % new, lookback
# 0s), the empty run (nothing new) and the unchanged snapshot, each round
# running OLD and NEW in turn (who goes first alternates). Each build has
# a target database and state of its own; both read one source. Prints,
# per workload, each build's median and the ratio NEW / OLD of the
# medians with the spread of the rounds' ratios, and checks that both
# targets end equal to the source. Starts its own throwaway PostgreSQL.
# Not a CI test: run it before calling a change to a run's path done.
#   ROWS=1000000 ROUNDS=5 bench/compare.sh OLD_BINARY NEW_BINARY
set -euo pipefail
shopt -s inherit_errexit  # a build that fails inside $(seconds ...) ends the benchmark
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
[ $# -eq 2 ] || { echo "usage: bench/compare.sh OLD_BINARY NEW_BINARY" >&2; exit 2; }
declare -A binary=([old]=$1 [new]=$2)
for b in old new; do [ -x "${binary[$b]}" ] || { echo "not an executable: ${binary[$b]}" >&2; exit 2; }; done
ROWS=${ROWS:-1000000}
ROUNDS=${ROUNDS:-5}

bench_start
createdb bench_source
table_ddl="(order_id bigint primary key, customer_id bigint, status text, amount numeric(12,2),
  updated_at timestamptz not null)"
psql -X -q -d bench_source -c "create table public.orders $table_ddl" \
  -c "create index on public.orders (updated_at)" \
  -c "insert into public.orders select g, g % 5000, (array['new','paid','completed'])[1 + g % 3], (g % 10000) / 100.0,
        now() - interval '30 days' + g * (interval '30 days' / $ROWS) from generate_series(1, $ROWS) g" \
  -c "vacuum analyze public.orders"
for b in old new; do
  createdb "bench_$b"
  psql -X -q -d "bench_$b" -c "create schema raw" -c "create table raw.orders $table_ddl" \
    -c "create table raw.orders_snapshot $table_ddl"
  mkdir -p "$dir/$b/pipelines"
  bench_daemon_file "$dir/$b/tidemark.yaml" bench_source "bench_$b"
  cat >"$dir/$b/pipelines/bench.yaml" <<'YAML'
pipeline: bench
source: source
target: target
schedule: "@hourly"
tables:
  - { name: orders, source_table: public.orders, target_table: raw.orders, key: [order_id], cursor: updated_at }
YAML
  cat >"$dir/$b/pipelines/snapshot.yaml" <<'YAML'
pipeline: snapshot
source: source
target: target
schedule: "@hourly"
tables:
  - { name: orders, mode: snapshot, source_table: public.orders, target_table: raw.orders_snapshot, key: [order_id] }
YAML
  "${binary[$b]}" migrate --config "$dir/$b/tidemark.yaml" >/dev/null
done

run() {  # run BUILD PIPELINE: one run of it, its output dropped
  "${binary[$1]}" run "$2" --config "$dir/$1/tidemark.yaml" >/dev/null
}
first_load() {  # first_load BUILD: the incremental table from nothing
  psql -X -q -d "bench_$1" -c "truncate raw.orders" \
    -c "delete from tidemark.watermarks where pipeline = 'bench'"
  seconds run "$1" bench
}
# 10 % of the rows changed and 1 % new, stamped a moment ago.
next_id=$((ROWS + 1))
change() {
  local new=$((ROWS / 100))
  psql -X -q -d bench_source \
    -c "update public.orders set amount = amount + 1, updated_at = clock_timestamp() where order_id % 10 = 0" \
    -c "insert into public.orders select g, g % 5000, 'new', 1, clock_timestamp()
          from generate_series($next_id, $((next_id + new - 1))) g"
  next_id=$((next_id + new))
  sleep 1.1  # past the safe horizon's margin: the rows are this round's
}

declare -A times=()
# round WORKLOAD ROUND COMMAND...: COMMAND BUILD for both builds, the order
# alternating with ROUND, each time recorded under WORKLOAD.
round() {
  local workload=$1 n=$2 b
  shift 2
  local order=(old new)
  [ $((n % 2)) -eq 0 ] || order=(new old)
  for b in "${order[@]}"; do times["$workload.$b"]+=" $("$@" "$b")"; done
}
timed_run() { seconds run "$2" "$1"; }  # timed_run PIPELINE BUILD

for b in old new; do run "$b" bench; done  # warm both, and give each a watermark
for n in $(seq 1 "$ROUNDS"); do round "first load" "$n" first_load; done
for n in $(seq 1 "$ROUNDS"); do
  change
  round "steady state" "$n" timed_run bench
done
for n in $(seq 1 "$ROUNDS"); do round "empty run" "$n" timed_run bench; done
for b in old new; do run "$b" snapshot; done  # the first snapshot fills each target
for n in $(seq 1 "$ROUNDS"); do round "unchanged snapshot" "$n" timed_run snapshot; done

printf 'rows %s, %s rounds; %s (old) against %s (new)\n' "$ROWS" "$ROUNDS" "${binary[old]}" "${binary[new]}"
printf '%-20s %10s %10s %10s  %s\n' workload old new new/old "spread of the rounds' ratios"
for workload in "first load" "steady state" "empty run" "unchanged snapshot"; do
  # shellcheck disable=SC2206
  old=(${times["$workload.old"]})
  # shellcheck disable=SC2206
  new=(${times["$workload.new"]})
  ratios=()
  for i in "${!old[@]}"; do ratios+=("$(awk -v a="${new[$i]}" -v b="${old[$i]}" 'BEGIN { print a / b }')"); done
  old_median=$(median "${old[@]}")
  new_median=$(median "${new[@]}")
  spread=$(printf '%s\n' "${ratios[@]}" | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.2f to %.2f", lo, hi }')
  printf '%-20s %9.3fs %9.3fs %10.3f  %s\n' "$workload" "$old_median" "$new_median" \
    "$(awk -v a="$new_median" -v b="$old_median" 'BEGIN { print a / b }')" "$spread"
done

digest() { psql -X -At -d "$1" -c "select md5(string_agg(o::text, ',' order by order_id)) from $2 o"; }
source_digest=$(digest bench_source public.orders)
for b in old new; do
  for table in raw.orders raw.orders_snapshot; do
    [ "$(digest "bench_$b" "$table")" = "$source_digest" ] ||
      { echo "$b: $table differs from the source" >&2; exit 1; }
  done
done
echo "both targets equal to the source: yes"
