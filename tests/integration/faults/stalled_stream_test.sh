#!/usr/bin/env bash
# Faults, the other way round: a live member must not be taken for a
# vanished one. The sessions tidemark opens tell the server to give up on
# a client that leaves its replies unacknowledged for two leases
# (tcp_user_timeout), and the kernel counts a window the client keeps
# closed the same way. A snapshot diff leaves the target's stream unread
# while it waits for the source's: here the source (a view) answers only
# after 8 s while a million target rows fill every buffer, with a 3 s
# lease (6 s). The run must succeed and leave the target equal to the
# source (without the diff's own setting, the server cut the target's
# stream 6 s into the wait and every run failed).
# Usage: stalled_stream_test.sh TIDEMARK_BINARY
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/netns.sh"
tidemark=$1
faults_setup stalled

# A text key: the diff streams every row's hash (30 MB from the target),
# not an integer key's blocks. The view answers a statement that orders
# its rows (the diff's stream) only after 8 s; the others at once.
rows=1000000
psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "create database source" -c "create database target"
psql -X -q -v ON_ERROR_STOP=1 -d source -c \
  "create table t (id text primary key, v text not null);
   insert into t select 'k' || lpad(g::text, 7, '0'), 'row ' || g from generate_series(1, $rows) g;
   create function slow() returns boolean language sql volatile
     as \$\$select pg_sleep(case when current_query() ilike '%order by%' then 8 else 0 end) is not null\$\$;
   create view slow_t as select id, v from t where (select slow())"
psql -X -q -v ON_ERROR_STOP=1 -d target -c \
  "create table t (id text primary key, v text not null);
   insert into t select 'k' || lpad(g::text, 7, '0'), 'row ' || g from generate_series(1, $rows) g;
   update t set v = 'changed' where right(id, 3) = '000'"

mkdir -p "$work/pipelines"
ns_daemon_config "$work/tidemark.yaml" 127.0.0.1 "" "fleet: { lease: 3s }"
cat >"$work/pipelines/shop.yaml" <<YAML
pipeline: shop
source: source
target: target
schedule: "@daily"
tables:
  - { name: t, mode: snapshot, source_table: slow_t, target_table: t, key: [id] }
YAML

started=$EPOCHREALTIME
check "a snapshot run whose diff waits 8 s for the source succeeds" \
  in_ns "$tidemark" run shop --config "$work/tidemark.yaml" >"$work/run.log" 2>&1
took=$(seconds_since "$started")
check "the run took the diff, and waited for the source ($took s)" awk -v t="$took" 'BEGIN { exit !(t >= 8) }'
digest() { psql -X -At -d "$1" -c "select count(*), md5(string_agg(id || v, ',' order by id collate \"C\")) from t"; }
check "the target equals the source" test "$(digest target)" = "$(digest source)"
check "the run diffed: 1,000 rows changed" grep -q "diff: 1000 changed, 0 missing, 0 gone" "$work/run.log"

if [ "$failed" -gt 0 ]; then
  tail -n 20 "$work/run.log" >&2 || true
  grep -v checkpoint "$ns_server_dir/server.log" | tail -n 20 >&2 || true
fi
report
