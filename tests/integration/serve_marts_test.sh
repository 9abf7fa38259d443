#!/usr/bin/env bash
# Marts under `tidemark serve`: dependents (inputs: [shop.orders]) wait for
# their input and run within seconds of its commit, on whichever member of
# a fleet of two owns them, once per input run; their schedules never fire
# in this test. A daily mart is written from complete rows as soon as the
# input has passed yesterday's end, an incremental one reads no further
# than the input's watermark, and the input-wait gauge says who waited.
# Usage: serve_marts_test.sh TIDEMARK_BINARY
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
source "$(dirname "$0")/lib.sh"
tidemark=$1
test_setup serve_marts

# The shop's orders of the last three days (UTC), one every two hours;
# the warehouse gets their copy, a daily mart and an incremental one.
psql -X -q -v ON_ERROR_STOP=1 -d "${db}_source" -c "
  create table orders (order_id int primary key, status text not null, amount numeric(10,2) not null,
                       ordered_at timestamptz not null, updated_at timestamptz not null default clock_timestamp());
  insert into orders
  select row_number() over (), case when row_number() over () % 4 = 0 then 'cancelled' else 'completed' end,
         10 + (row_number() over ()) % 7, t, t
  from generate_series(date_trunc('day', now() at time zone 'UTC') at time zone 'UTC' - interval '3 days',
                       now() - interval '1 minute', interval '2 hours') t"
psql -X -q -v ON_ERROR_STOP=1 -d "${db}_target" -c "
  create schema raw;
  create table raw.orders (order_id int primary key, status text not null, amount numeric(10,2) not null,
                           ordered_at timestamptz not null, updated_at timestamptz not null);
  create schema mart;
  create table mart.daily (day date primary key, orders bigint not null, revenue numeric not null);
  create table mart.completed (order_id int primary key, amount numeric(10,2) not null,
                               updated_at timestamptz not null)"
daemon_config debug
sed -i 's/^log: .*/log: { level: info }\nfleet: { lease: 3s }/' "$work/tidemark.yaml"
three_days_ago=$(psql -X -At -d "${db}_source" -c "select ((now() at time zone 'UTC')::date - 3)::text")
cat >"$work/pipelines/shop.yaml" <<YAML
pipeline: shop
source: source
target: target
schedule: "0 0 1 1 *"
tables:
  - { name: orders, source_table: public.orders, target_table: raw.orders, key: [order_id], cursor: updated_at }
YAML
cat >"$work/pipelines/marts.yaml" <<YAML
pipeline: marts
source: target
target: target
schedule: "0 0 1 1 *"
stale_after: 2d
tables:
  - name: daily
    mode: partition
    partition: { column: day, unit: day }
    initial: "$three_days_ago"
    inputs: [shop.orders]
    query: |
      select \$1::date as day, count(*) as orders, coalesce(sum(amount), 0) as revenue
      from raw.orders where ordered_at >= \$1 and ordered_at < \$2 and status = 'completed'
    target_table: mart.daily
  - name: completed
    source_table: raw.orders
    target_table: mart.completed
    columns: [order_id, amount, updated_at]
    key: [order_id]
    cursor: updated_at
    initial: "${three_days_ago}T00:00:00Z"
    inputs: [shop.orders]
YAML
target() { psql -X -At -d "${db}_target" -c "$1"; }
source_db() { psql -X -At -d "${db}_source" -c "$1"; }

# Two members (start_member, lib.sh).
start_member 1
start_member 2
both_see_two() { [ "$(member_value 1 tidemark_fleet_members)" = 2 ] && [ "$(member_value 2 tidemark_fleet_members)" = 2 ]; }
check "two members share the tables" eventually 20 both_see_two
# The wakes below reach a member only once it listens for tables that move.
listening() {
  [ "$(target "select count(*) from pg_stat_activity
               where datname = current_database() and query = 'LISTEN tidemark_moved'")" = 2 ]
}
check "both members listen for tables that move" eventually 20 listening
# Nothing fires by schedule; the dependents have not run (and, checked at
# the end, never run but when woken).
check "no dependent runs before its input moves" test "$(target "select count(*) from tidemark.runs")" = 0

# The input's run from the command line: its commit wakes both dependents
# on whichever member owns each, within seconds.
"$tidemark" run shop --table orders --config "$work/tidemark.yaml" >"$work/run1.log" 2>&1
committed=$EPOCHREALTIME
daily_done() { [ "$(target "select count(*) from mart.daily")" = 3 ]; }
check "the daily mart writes the three complete days once its input has loaded them" eventually 10 daily_done
echo "daily mart written $(seconds_since "$committed") s after its input's run ended"
want_daily() {
  source_db "select d::date, count(o.order_id), coalesce(sum(o.amount), 0)
             from generate_series((now() at time zone 'UTC')::date - 3, (now() at time zone 'UTC')::date - 1,
                                  interval '1 day') d
             left join orders o on o.status = 'completed' and o.ordered_at >= d::timestamp at time zone 'UTC'
                               and o.ordered_at < (d + interval '1 day')::timestamp at time zone 'UTC'
             group by 1 order by 1"
}
check "the daily mart equals the query on the shop" test "$(target "select * from mart.daily order by 1")" = "$(want_daily)"
completed_done() {
  [ "$(target "select count(*) from mart.completed")" = "$(source_db "select count(*) from orders")" ]
}
check "the incremental mart reads everything its input loaded" eventually 10 completed_done
check "the incremental mart ran once, woken by the input" test \
  "$(target "select string_agg(trigger, ',') from tidemark.runs where table_name = 'completed'")" = input
check "the daily mart's partitions are its runs, each woken by the input" test \
  "$(target "select count(*) from tidemark.runs where table_name = 'daily' and trigger = 'input'")" = 3

# A dependent's run belongs to the member that owns it; the input's move
# reaches both members, and only the owner runs it.
owner_of() { target "select distinct pid from tidemark.runs where pipeline = 'marts' and table_name = '$1'"; }
check "one member ran all of the daily mart's runs" test "$(owner_of daily | wc -l)" = 1
check "one member ran the incremental mart" test "$(owner_of completed | wc -l)" = 1

# New orders: the input's next run wakes the incremental mart once more,
# and it reads the new rows; the daily mart has nothing new to write.
source_db "insert into orders values (10001, 'completed', 5, now(), clock_timestamp()),
                                     (10002, 'completed', 7, now(), clock_timestamp())" >/dev/null
sleep 1.5  # the input's hi stays a second below its source's clock
"$tidemark" run shop --table orders --config "$work/tidemark.yaml" >"$work/run2.log" 2>&1
check "the incremental mart reads the new rows after its input's next run" eventually 10 completed_done
runs_of_completed() { [ "$(target "select count(*) from tidemark.runs where table_name = 'completed'")" = 2 ]; }
check "each input run wakes a dependent once" eventually 5 runs_of_completed
sleep 2
check "and not more" runs_of_completed
check "the daily mart wrote nothing more" test "$(target "select count(*) from tidemark.runs where table_name = 'daily'")" = 3

# The gauge: every configured table has it, 0 when nothing waits.
gauge() {
  local n
  for n in 1 2; do member_value "$n" "tidemark_input_wait_seconds{pipeline=\"marts\",table=\"daily\"}"; done | sort -u
}
check "the input-wait gauge exists and reads 0 on both members" test "$(gauge)" = 0
check "nothing ran by its schedule or at start-up, all along" test \
  "$(target "select count(*) from tidemark.runs where trigger not in ('manual', 'input')")" = 0

stop_serve "${member_pid[1]}"
stop_serve "${member_pid[2]}"
if [ "$failed" -gt 0 ]; then
  for n in 1 2; do echo "--- member $n" >&2; tail -n 30 "$work/member$n.log" >&2; done
fi
report
