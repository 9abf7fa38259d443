#!/usr/bin/env bash
# Tables without a key against their keyed twins, on ROWS rows of the
# orders table (public.events is the same rows without a primary key,
# with an index on its identity cursor as the keyed one has on its key),
# ROUNDS rounds, the tools alternating within a round; medians:
#   - a keyed first load (incremental, into an empty target with its
#     primary key) of the whole table against an append table's first
#     load of its first nine tenths (no key);
#   - an append run of the last tenth, new rows into that full target,
#     against a keyed first load of the same tenth (its initial:): the
#     cost per row of the same rows;
#   - an unchanged snapshot run, keyed against keyless (multiset), of the
#     same columns.
# Starts its own throwaway PostgreSQL.
#   ROWS=1000000 ROUNDS=3 bench/keyless.sh
set -euo pipefail
shopt -s inherit_errexit
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
ROWS=${ROWS:-1000000}
ROUNDS=${ROUNDS:-3}
tidemark=$(built_tidemark)

bench_start
bench_orders
new_rows=$((ROWS / 10))
psql -X -q -d bench_source \
  -c "create table public.events as select * from public.orders" \
  -c "alter table public.events add column id bigint generated always as identity" \
  -c "create index on public.events (id)" \
  -c "vacuum analyze public.events"
psql -X -q -d bench_target \
  -c "create table raw.events (like raw.orders)" -c "alter table raw.events add column id bigint" \
  -c "create table raw.orders_tail (like raw.orders including indexes)" \
  -c "create table raw.orders_snapshot (like raw.orders including indexes)" \
  -c "create table raw.events_snapshot (like raw.orders)"
bench_daemon_file "$dir/tidemark.yaml" bench_source bench_target
cat >"$dir/pipelines/bench.yaml" <<YAML
pipeline: bench
source: source
target: target
schedule: "@hourly"
tables:
  - { name: keyed, source_table: public.orders, target_table: raw.orders, key: [order_id], cursor: order_id }
  - { name: keyed_tail, source_table: public.orders, target_table: raw.orders_tail, key: [order_id],
      cursor: order_id, initial: "$((ROWS - new_rows + 1))" }
  - { name: append, mode: append, source_table: public.events, target_table: raw.events, cursor: id }
  - { name: keyed_snapshot, mode: snapshot, source_table: public.orders, target_table: raw.orders_snapshot,
      key: [order_id] }
  - { name: keyless_snapshot, mode: snapshot, source_table: public.events, target_table: raw.events_snapshot,
      columns: [order_id, customer_id, status, amount, updated_at] }
YAML
"$tidemark" migrate --config "$dir/tidemark.yaml" >/dev/null
run() { "$tidemark" run bench --table "$1" --config "$dir/tidemark.yaml" >/dev/null; }
# empty TABLE TARGET: no rows in TARGET, no watermark for TABLE.
empty() {
  psql -X -q -d bench_target -c "truncate $2" -c "delete from tidemark.watermarks where table_name = '$1'" \
    -c "vacuum $2"
}
run keyed_snapshot
run keyless_snapshot

declare -A first=() tail=() more=() unchanged=()
for round in $(seq 1 "$ROUNDS"); do
  for i in 0 1; do
    case $(((i + round) % 2)) in
      0)
        empty keyed raw.orders
        first[keyed]="${first[keyed]:-} $(seconds run keyed)"
        empty keyed_tail raw.orders_tail
        tail[keyed]="${tail[keyed]:-} $(seconds run keyed_tail)"
        unchanged[keyed]="${unchanged[keyed]:-} $(seconds run keyed_snapshot)"
        ;;
      1)
        # The last tenth of the rows arrives after the first load.
        psql -X -q -d bench_source -c "delete from public.events where id > $((ROWS - new_rows))" \
          -c "vacuum public.events"
        empty append raw.events
        first[append]="${first[append]:-} $(seconds run append)"
        psql -X -q -d bench_source -c "insert into public.events overriding system value
          select order_id, customer_id, status, amount, updated_at, order_id from public.orders
          where order_id > $((ROWS - new_rows))" -c "vacuum analyze public.events"
        more[append]="${more[append]:-} $(seconds run append)"
        unchanged[keyless]="${unchanged[keyless]:-} $(seconds run keyless_snapshot)"
        ;;
    esac
  done
done
us_per_row() { awk -v s="$1" -v n="$2" 'BEGIN { printf "%.2f", s * 1000000 / n }'; }
# shellcheck disable=SC2086
keyed=$(median ${first[keyed]})
# shellcheck disable=SC2086
append=$(median ${first[append]})
# shellcheck disable=SC2086
appended=$(median ${more[append]})
# shellcheck disable=SC2086
keyed_tail=$(median ${tail[keyed]})
# shellcheck disable=SC2086
keyed_unchanged=$(median ${unchanged[keyed]})
# shellcheck disable=SC2086
keyless_unchanged=$(median ${unchanged[keyless]})
first_rows=$((ROWS - new_rows))
printf 'keyed first load of %d rows: %.2f s (%s), %s us/row\n' "$ROWS" "$keyed" "${first[keyed]# }" \
  "$(us_per_row "$keyed" "$ROWS")"
printf 'append first load of %d rows: %.2f s (%s), %s us/row\n' "$first_rows" "$append" "${first[append]# }" \
  "$(us_per_row "$append" "$first_rows")"
printf 'append run of %d new rows into %d: %.2f s (%s), %s us/row\n' "$new_rows" "$first_rows" "$appended" \
  "${more[append]# }" "$(us_per_row "$appended" "$new_rows")"
printf 'keyed first load of the same %d rows: %.2f s (%s), %s us/row\n' "$new_rows" "$keyed_tail" \
  "${tail[keyed]# }" "$(us_per_row "$keyed_tail" "$new_rows")"
printf 'unchanged snapshot: keyed %.3f s (%s), keyless %.3f s (%s): %.2fx\n' "$keyed_unchanged" \
  "${unchanged[keyed]# }" "$keyless_unchanged" "${unchanged[keyless]# }" \
  "$(awk -v a="$keyless_unchanged" -v b="$keyed_unchanged" 'BEGIN { print a / b }')"
