#!/usr/bin/env bash
# Marts (docs/partitions.md), measured in one run on a throwaway PostgreSQL:
#   recheck   the seed's daily_revenue over ORDERS orders in 30 days
#             (an index on ordered_at): a firing with nothing due and
#             `lookback: 3d` (four unchanged partitions checked) against
#             one with `lookback: 0s`, ROUNDS each, alternating; the
#             difference is what the four checks cost, set against the
#             four partitions' queries alone, run in one psql session
#             (less an empty psql session's cost). Goal: at most 1.2x.
#   writes    what those firings wrote: rows of the mart whose version
#             (xmin) changed, and run rows added. Goal: 0 and 0.
#   wakeup    `serve` with DEPENDENTS incremental tables reading the
#             targets of INPUTS input tables (inputs: [...], DEPENDENTS /
#             INPUTS each), their schedules never firing: ROUNDS times a
#             new row in each input's source and `tidemark run` of the
#             inputs; each dependent's start (its run row) less its
#             input's commit (the input's run row's end), p50, p95, max.
#             Goal: p95 within 2 s. Without inputs: a dependent starts
#             at its next firing, on average half its schedule later.
#   ORDERS=1000000 ROUNDS=15 INPUTS=10 DEPENDENTS=100 bench/marts.sh
set -euo pipefail
shopt -s inherit_errexit
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
ORDERS=${ORDERS:-1000000}
ROUNDS=${ROUNDS:-15}
INPUTS=${INPUTS:-10}
DEPENDENTS=${DEPENDENTS:-100}
tidemark=$(built_tidemark)

bench_start
createdb bench_source
createdb bench_target
echo "== recheck: $ORDERS orders over 30 days, lookback 3d against 0s, $ROUNDS rounds"
psql -X -q -d bench_source \
  -c "create table orders (order_id bigint primary key, status text not null, amount numeric(12,2) not null,
        ordered_at timestamptz not null)" \
  -c "insert into orders select g, (array['new','completed','completed','cancelled'])[1 + g % 4], (g % 10000) / 100.0,
        date_trunc('day', now() at time zone 'UTC') at time zone 'UTC' - interval '30 days'
        + (g - 1) * (interval '30 days' / $ORDERS) from generate_series(1, $ORDERS) g" \
  -c "create index on orders (ordered_at)" -c "vacuum analyze orders"
psql -X -q -d bench_target -c "create schema mart" \
  -c "create table mart.with_lookback (day date primary key, orders bigint not null, revenue numeric not null)" \
  -c "create table mart.without (day date primary key, orders bigint not null, revenue numeric not null)"
# shellcheck disable=SC2016  # $1 and $2 are the query's parameters
query='select $1::date as day, count(*) as orders, coalesce(sum(amount), 0) as revenue
      from orders where ordered_at >= $1 and ordered_at < $2 and status = '"'completed'"
initial=$(psql -X -At -d bench_source -c "select ((now() at time zone 'UTC')::date - 30)::text")
bench_daemon_file "$dir/tidemark.yaml" bench_source bench_target
for variant in with_lookback without; do
  lookback=3d
  [ "$variant" = without ] && lookback=0s
  cat >"$dir/pipelines/$variant.yaml" <<YAML
pipeline: $variant
source: source
target: target
schedule: "0 0 1 1 *"
timezone: UTC
tables:
  - name: daily_revenue
    mode: partition
    partition: { column: day, unit: day }
    initial: "$initial"
    lookback: $lookback
    query: |
      $query
    target_table: mart.$variant
YAML
  "$tidemark" run "$variant" --config "$dir/tidemark.yaml" >/dev/null
done
# The four partitions a lookback of 3d checks, as their queries alone.
queries=$(psql -X -At -d bench_source -c "
  select string_agg(format('select %L::date as day, count(*), coalesce(sum(amount), 0) from orders
                            where ordered_at >= %L::date and ordered_at < %L::date and status = ''completed'';',
                           d, d, d + 1), E'\n')
  from generate_series(4, 1, -1) back, lateral (select (now() at time zone 'UTC')::date - back as d) day")
psql_session() { PGTZ=UTC psql -X -q -d bench_source -c "$1" >/dev/null; }
versions() { psql -X -At -d bench_target -c "select string_agg(day || ':' || xmin, ',' order by day) from mart.with_lookback"; }
runs() { psql -X -At -d bench_target -c "select count(*) from tidemark.runs"; }
before_versions=$(versions)
before_runs=$(runs)
declare -a checked=() plain=() alone=() empty=()
for ((round = 0; round < ROUNDS; round++)); do
  checked+=("$(seconds "$tidemark" run with_lookback --config "$dir/tidemark.yaml")")
  plain+=("$(seconds "$tidemark" run without --config "$dir/tidemark.yaml")")
  alone+=("$(seconds psql_session "$queries")")
  empty+=("$(seconds psql_session "select 1")")
done
awk -v c="$(median "${checked[@]}")" -v p="$(median "${plain[@]}")" -v a="$(median "${alone[@]}")" \
  -v e="$(median "${empty[@]}")" 'BEGIN {
  printf "firing with lookback 3d: %.3f s, with 0s: %.3f s: the four checks %.1f ms\n", c, p, (c - p) * 1000
  printf "the four queries alone: %.3f s, an empty session %.3f s: %.1f ms\n", a, e, (a - e) * 1000
  printf "checks / queries: %.2f (goal: at most 1.20)\n", (c - p) / (a - e)
}'
echo "== writes: what the $ROUNDS firings with nothing changed wrote"
[ "$(versions)" = "$before_versions" ] && echo "mart rows whose version changed: 0" ||
  echo "mart rows whose version changed: SOME (the versions differ)"
echo "run rows added: $(($(runs) - before_runs))"

echo "== wakeup: $DEPENDENTS dependents on $INPUTS inputs under serve, $ROUNDS rounds"
createdb bench_wake
psql -X -q -d bench_wake -c "create schema s" -c "create schema r" -c "create schema m" \
  -c "do \$\$ begin
        for i in 1..$INPUTS loop
          execute format('create table s.i%s (id bigint primary key, updated_at timestamptz not null)', i);
          execute format('insert into s.i%s values (0, now() - interval ''1 hour'')', i);
          execute format('create table r.i%s (id bigint primary key, updated_at timestamptz not null)', i);
        end loop;
        for d in 1..$DEPENDENTS loop
          execute format('create table m.d%s (id bigint primary key, updated_at timestamptz not null)', d);
        end loop; end \$\$"
mkdir -p "$dir/wake/pipelines"
metrics_port=$(free_port)
bench_many_tables_daemon_file "$dir/wake/tidemark.yaml" "$metrics_port" "max_concurrent_runs: 8"
sed -i 's/dbname=bench"/dbname=bench_wake"/' "$dir/wake/tidemark.yaml"
{
  printf 'pipeline: inputs\nsource: db\ntarget: db\nschedule: "0 0 1 1 *"\ntables:\n'
  for ((i = 1; i <= INPUTS; i++)); do
    printf '  - { name: i%s, source_table: s.i%s, target_table: r.i%s, key: [id], cursor: updated_at }\n' "$i" "$i" "$i"
  done
} >"$dir/wake/pipelines/inputs.yaml"
{
  printf 'pipeline: marts\nsource: db\ntarget: db\nschedule: "0 0 1 1 *"\ntables:\n'
  for ((d = 1; d <= DEPENDENTS; d++)); do
    i=$(((d - 1) % INPUTS + 1))
    printf '  - { name: d%s, source_table: r.i%s, target_table: m.d%s, key: [id], cursor: updated_at, ' "$d" "$i" "$d"
    printf 'initial: "2000-01-01T00:00:00Z", inputs: [inputs.i%s] }\n' "$i"
  done
} >"$dir/wake/pipelines/marts.yaml"
"$tidemark" serve --config "$dir/wake/tidemark.yaml" >"$dir/wake/serve.log" 2>&1 &
serve=$!
bench_on_exit "kill -9 $serve"
until curl -sf "http://127.0.0.1:$metrics_port/readyz" >/dev/null; do sleep 0.2; done
sleep 1
wake() { psql -X -At -d bench_wake -c "$1"; }
for ((round = 1; round <= ROUNDS; round++)); do
  wake "do \$\$ begin for i in 1..$INPUTS loop
          execute format('insert into s.i%s values (%s, clock_timestamp())', i, $round);
        end loop; end \$\$" >/dev/null
  sleep 1.1  # past the horizon's margin: the new rows are this round's
  "$tidemark" run inputs --config "$dir/wake/tidemark.yaml" >/dev/null
  # Each dependent has run once more, woken by this round's input run.
  until [ "$(wake "select count(*) from tidemark.runs where pipeline = 'marts' and trigger = 'input'")" -ge \
          $((round * DEPENDENTS)) ]; do sleep 0.2; done
done
sleep 1
# Each dependent run, against the latest commit of its input before it.
wake "with d as (
        select r.started_at, (select max(i.finished_at) from tidemark.runs i
                              where i.pipeline = 'inputs' and i.table_name = 'i' || ((substr(r.table_name, 2)::int - 1)
                                    % $INPUTS + 1) and i.finished_at <= r.started_at) as committed
        from tidemark.runs r where r.pipeline = 'marts' and r.trigger = 'input'),
      delays as (select extract(epoch from started_at - committed) as s from d where committed is not null)
      select format('dependent runs: %s, started after their input''s commit: p50 %s s, p95 %s s, max %s s (goal: p95 within 2 s)',
                    count(*), round(percentile_cont(0.5) within group (order by s)::numeric, 3),
                    round(percentile_cont(0.95) within group (order by s)::numeric, 3), round(max(s)::numeric, 3))
      from delays"
equal=$(
  for ((d = 1; d <= DEPENDENTS; d++)); do
    i=$(((d - 1) % INPUTS + 1))
    echo "select (select array_agg(id order by id) from m.d$d) = (select array_agg(id order by id) from r.i$i) as same union all"
  done
  echo "select null where false"
)
echo "dependents holding every row of their input: $(wake "select count(*) filter (where same) from ($equal) e") of $DEPENDENTS"
kill -TERM "$serve"
wait "$serve" || true
