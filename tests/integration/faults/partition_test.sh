#!/usr/bin/env bash
# Faults: a network partition between the daemon and its databases. A
# writer keeps changing two tables while `serve` loads them every second;
# then every packet between the daemon and the server is dropped for 20 s
# (iptables in the test's own namespace). The daemon stays up, once the
# network is back both tables run again within 25 s, and after the writer
# stops each target equals its source.
# Usage: partition_test.sh TIDEMARK_BINARY
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/netns.sh"
tidemark=$1
faults_setup partition

psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "create database source" -c "create database target"
for t in t1 t2; do
  psql -X -q -v ON_ERROR_STOP=1 -d source -c \
    "create table $t (id int primary key, n int not null default 0,
                      updated_at timestamptz not null default clock_timestamp());
     create function ${t}_stamp() returns trigger language plpgsql as
       \$\$begin new.updated_at := clock_timestamp(); return new; end\$\$;
     create trigger ${t}_stamp before update on $t for each row execute function ${t}_stamp();
     insert into $t (id) select generate_series(1, 1000)"
  psql -X -q -v ON_ERROR_STOP=1 -d target -c \
    "create table $t (id int primary key, n int not null, updated_at timestamptz not null)"
done
mkdir -p "$work/pipelines"
cat >"$work/tidemark.yaml" <<YAML
state: target
connections:
  source: { dsn: "host=127.0.0.2 port=5432 dbname=source" }
  target: { dsn: "host=127.0.0.2 port=5432 dbname=target" }
pipelines_dir: pipelines
metrics: { listen: "127.0.0.1:19466" }
log: { level: info }
YAML
cat >"$work/pipelines/shop.yaml" <<YAML
pipeline: shop
source: source
target: target
schedule: "* * * * * *"
tables:
  - { name: t1, source_table: t1, target_table: t1, key: [id], cursor: updated_at }
  - { name: t2, source_table: t2, target_table: t2, key: [id], cursor: updated_at }
YAML

# The writer: over the Unix socket, which the partition leaves alone.
writer() {
  while [ ! -e "$work/stop-writer" ]; do
    psql -X -q -d source -c "update t1 set n = n + 1 where id = 1 + (random() * 999)::int;
                             insert into t2 (id) select coalesce(max(id), 0) + 1 from t2" >/dev/null
    sleep 0.05
  done
}
writer &
writer_pid=$!
pids+=("$writer_pid")

ns_spawn "$work/serve.log" "$tidemark" serve --config "$work/tidemark.yaml"
serve_pid=$spawned
ready() { test "$(in_ns curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:19466/readyz)" = "$1"; }
q() { psql -X -At -d target -c "$1" 2>/dev/null; }
ran_since() {  # ran_since EPOCH: both tables have a successful run that started after EPOCH
  test "$(q "select count(distinct table_name) from tidemark.runs
              where status = 'success' and started_at > to_timestamp($1)")" = 2
}
started=$EPOCHREALTIME
check "both tables run" eventually 20 ran_since "$started"

ns_cut 127.0.0.2
cut=$EPOCHREALTIME
# (Its /readyz goes on answering 200 until the state session's unanswered
# statement times out, 60 s on; docs/operations.md.)
sleep "$(awk -v c="$cut" -v n="$EPOCHREALTIME" 'BEGIN { r = 20 - (n - c); print (r > 0 ? r : 0) }')"
check "the daemon is still up after 20 s cut off" kill -0 "$serve_pid"
check "and still answers /healthz" in_ns curl -sf -o /dev/null http://127.0.0.1:19466/healthz
cut_for=$(seconds_since "$cut")
ns_heal 127.0.0.2
healed=$EPOCHREALTIME
# A statement sent into the partition is retransmitted with a doubling
# backoff: its next try after the network's return, whose reset ends the
# run holding it, may be 13 s away.
check "within 25 s of the network's return both tables run again" eventually 25 ran_since "$healed"
resumed=$(seconds_since "$healed")
check "and /readyz says it is ready" eventually 10 ready 200

touch "$work/stop-writer"
wait "$writer_pid"
stopped=$EPOCHREALTIME
covered() {  # covered EPOCH: both watermarks are past EPOCH
  test "$(q "select count(*) from tidemark.watermarks where value::timestamptz > to_timestamp($1)")" = 2
}
check "after the writer stops, both watermarks pass its last write" eventually 20 covered "$stopped"
for t in t1 t2; do
  digest() { psql -X -At -d "$1" -c "select count(*), md5(string_agg(id || ' ' || n || ' ' || updated_at, ',' order by id)) from $t"; }
  check "target $t equals the source" test "$(digest target)" = "$(digest source)"
done
echo "figures: cut off for ${cut_for} s; both tables ran again ${resumed} s after the network came back"

if [ "$failed" -gt 0 ]; then
  tail -n 30 "$work/serve.log" >&2 || true
fi
report
