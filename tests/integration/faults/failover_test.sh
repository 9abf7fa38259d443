#!/usr/bin/env bash
# Faults: failover. The warehouse (state and target) and the shop (source)
# each run on a primary with a synchronous streaming standby, and every DSN
# names both (host=primary,standby target_session_attrs=read-write). While
# a writer changes the source and `serve` loads it every second, the
# warehouse's primary stops dead (pg_ctl -m immediate) while runs wait on
# their COMMIT for the standby (its WAL receiver stopped: the commits are in
# doubt), and its standby is promoted; later the shop's primary stops. Each time tidemark goes on with the new
# primary within 30 s of the promotion; every run the log reported as a
# success is in the new primary's history (no commit lost, none applied
# twice: each run starts from the watermark the one before it left), and
# once the writer stops the target equals the source.
# Usage: failover_test.sh TIDEMARK_BINARY
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/workload.sh"
tidemark=$1
[ "$(id -u)" -eq 0 ] || { echo "skipped: the servers run as the postgres user, which needs root"; exit 77; }
work=$(mktemp -d /tmp/tidemark-failover.XXXXXX)
chmod 755 "$work"
servers=()
stop_servers() {
  local pid dir
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  for dir in "${servers[@]}"; do
    as_pg_owner "$(pg_bin)/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  done
  wait 2>/dev/null || true
  [ -n "${KEEP_WORK:-}" ] || rm -rf "$work"
}
trap stop_servers EXIT

# pair NAME: a primary in $work/NAME-1 and its synchronous standby in
# $work/NAME-2 (each its own socket folder, port 5432), a database NAME.
pair() {
  local p=$work/$1-1 s=$work/$1-2 bin
  bin=$(pg_bin)
  mkdir -p "$p" "$s"
  chown postgres:postgres "$p" "$s"
  servers+=("$p" "$s")
  as_pg_owner "$bin/initdb" -D "$p/data" -U postgres --auth=trust --no-sync >"$p/initdb.log" 2>&1
  as_pg_owner "$bin/pg_ctl" -D "$p/data" -l "$p/server.log" -w -t 60 start \
    -o "-k $p -p 5432 -c listen_addresses='' -c fsync=off" >/dev/null
  as_pg_owner "$bin/pg_basebackup" -h "$p" -p 5432 -U postgres -D "$s/data" -R -X stream -C -S standby \
    --checkpoint=fast --no-sync >"$s/basebackup.log" 2>&1
  as_pg_owner "$bin/pg_ctl" -D "$s/data" -l "$s/server.log" -w -t 60 start \
    -o "-k $s -p 5432 -c listen_addresses='' -c fsync=off -c hot_standby=on" >/dev/null
  psql -X -q -h "$p" -p 5432 -U postgres -d postgres -c "alter system set synchronous_standby_names = '*'" \
    -c "select pg_reload_conf()" -c "create database $1" >/dev/null
}
dsn() { echo "host=$work/$1-1,$work/$1-2 port=5432 user=postgres dbname=$1 target_session_attrs=read-write connect_timeout=2"; }

pair shop
pair warehouse
target=$(dsn warehouse)
stamped_tables "$(dsn shop)" "$target" 1000
cat >"$work/tidemark.yaml" <<YAML
state: warehouse
connections:
  shop: { dsn: "$(dsn shop)" }
  warehouse: { dsn: "$target" }
pipelines_dir: pipelines
metrics: { listen: "127.0.0.1:$(free_port)" }
YAML
every_second_pipeline shop warehouse
# The writer follows the shop's primary, as the DSN leads it.
start_writer "$(dsn shop)" 1000
"$tidemark" serve --config "$work/tidemark.yaml" >"$work/serve.log" 2>&1 &
pids+=("$!")

started=$EPOCHREALTIME
check "both tables run" eventually 20 ran_since "$started"

# The warehouse's commits are left in doubt first: its standby stops
# acknowledging (its WAL receiver stopped), so each run's COMMIT waits on
# the primary until the primary dies under it.
receiver() { pgrep -f "postgres: walreceiver" -P "$(head -n 1 "$work/$1-2/data/postmaster.pid")"; }
declare -A took
for side in warehouse shop; do
  sleep 2
  if [ "$side" = warehouse ]; then
    kill -STOP "$(receiver "$side")"
    waiting_commits() {
      test "$(psql -X -At -h "$work/warehouse-1" -p 5432 -U postgres -d warehouse -c \
                "select count(*) from pg_stat_activity where wait_event = 'SyncRep'")" -ge 1
    }
    check "warehouse: a run's COMMIT waits for the standby" eventually 10 waiting_commits
  fi
  as_pg_owner "$(pg_bin)/pg_ctl" -D "$work/$side-1/data" -m immediate -w stop >/dev/null
  [ "$side" = warehouse ] && kill -CONT "$(receiver "$side")"
  sleep 1
  as_pg_owner "$(pg_bin)/pg_ctl" -D "$work/$side-2/data" -w promote >/dev/null
  promoted=$EPOCHREALTIME
  check "$side failed over: both tables run on the new primary within 30 s" eventually 30 ran_since "$promoted"
  took[$side]=$(seconds_since "$promoted")
done

stop_writer
check "after the writer stops, both watermarks pass its last write" eventually 30 covered "$EPOCHREALTIME"
targets_equal_sources "$(dsn shop)"

# Every success the log reported is in the history that survived.
reported=$(grep -o 'success run [0-9]*' "$work/serve.log" | awk '{ print $3 }' | sort -n | tr '\n' ',' | sed 's/,$//')
check "every run the log reported as a success is in the new primary's history" test \
  "$(state_query "select count(*) from tidemark.runs where status = 'success' and run_id in ($reported)")" = \
  "$(tr ',' '\n' <<<"$reported" | wc -l)"
check "each success started from the watermark the one before it left (none lost, none twice)" test \
  "$(state_query "select count(*) from (select watermark_before, lag(watermark_after) over w as previous
                                               from tidemark.runs where status = 'success'
                                               window w as (partition by table_name order by run_id)) r
                       where previous is not null and watermark_before is distinct from previous")" = 0
echo "figures: both tables ran on the new primary ${took[warehouse]} s after the warehouse's promotion," \
  "${took[shop]} s after the shop's"

if [ "$failed" -gt 0 ]; then
  grep -v "skipped the firing" "$work/serve.log" | tail -n 30 >&2 || true
fi
report
