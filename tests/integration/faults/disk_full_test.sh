#!/usr/bin/env bash
# Faults: the target runs out of disk. Table t1 loads into a tablespace on
# a 4 MB tmpfs (mounted in the test's own namespace) and its source holds
# about 12 MB; t2 loads into the default tablespace. `tidemark run` fails
# t1 naming the disk and loads t2; t1's target holds no row of the failed
# load and its watermark did not move; the daemon's next firings go on
# failing t1 and running t2. Once the disk grows, the next run of t1
# loads it whole and the target equals the source.
# Usage: disk_full_test.sh TIDEMARK_BINARY
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/netns.sh"
tidemark=$1
faults_setup disk

ns_disk "$work/small" 4m
psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "create database source" -c "create database target"
psql -X -q -v ON_ERROR_STOP=1 -d target -c "create tablespace small location '$work/small'"
for t in t1 t2; do
  psql -X -q -v ON_ERROR_STOP=1 -d source -c \
    "create table $t (id int primary key, v text not null, updated_at timestamptz not null default now());
     insert into $t select g, repeat(md5(g::text), 3), now() - interval '1 hour' from generate_series(1, 100000) g"
done
psql -X -q -v ON_ERROR_STOP=1 -d target \
  -c "create table t1 (id int primary key, v text not null, updated_at timestamptz not null) tablespace small" \
  -c "create table t2 (id int primary key, v text not null, updated_at timestamptz not null)"

mkdir -p "$work/pipelines"
ns_daemon_config "$work/tidemark.yaml" 127.0.0.1 "" 'metrics: { listen: "127.0.0.1:19467" }'
cat >"$work/pipelines/shop.yaml" <<YAML
pipeline: shop
source: source
target: target
schedule: "*/2 * * * * *"
tables:
  - { name: t1, source_table: t1, target_table: t1, key: [id], cursor: updated_at }
  - { name: t2, source_table: t2, target_table: t2, key: [id], cursor: updated_at }
YAML
q() { psql -X -At -d target -c "$1"; }
digest() { psql -X -At -d "$1" -c "select count(*), md5(string_agg(id || v || updated_at, ',' order by id)) from $2"; }

status=0
in_ns "$tidemark" run shop --config "$work/tidemark.yaml" >"$work/run.log" 2>&1 || status=$?
check "tidemark run exits 1: a table failed" test "$status" = 1
check "t1's run failed naming the disk" test \
  "$(q "select count(*) from tidemark.runs where table_name = 't1' and status = 'failed'
          and error ilike '%no space left on device%'")" = 1
check "t1's target holds no row of the failed load" test "$(q "select count(*) from t1")" = 0
check "t1 has no watermark" test "$(q "select count(*) from tidemark.watermarks where table_name = 't1'")" = 0
check "t2 loaded beside it" test "$(digest target t2)" = "$(digest source t2)"

# The daemon: t1 goes on failing, t2 goes on running, nothing dies.
ns_spawn "$work/serve.log" "$tidemark" serve --config "$work/tidemark.yaml"
serve_pid=$spawned
since=$EPOCHREALTIME
runs_of() {  # runs_of TABLE STATUS N: at least N runs of TABLE with STATUS since the daemon started
  test "$(q "select count(*) from tidemark.runs where table_name = '$1' and status = '$2'
              and started_at > to_timestamp($since)")" -ge "$3"
}
check "serve: t1 keeps failing on the full disk" eventually 20 runs_of t1 failed 1
check "serve: t2 keeps running" eventually 20 runs_of t2 success 2
check "serve: still up" kill -0 "$serve_pid"
check "serve: t1's target still holds no row" test "$(q "select count(*) from t1")" = 0
kill -TERM "$serve_pid"
wait "$serve_pid" || true

ns_disk_grow "$work/small" 64m
status=0
in_ns "$tidemark" run shop --table t1 --config "$work/tidemark.yaml" >>"$work/run.log" 2>&1 || status=$?
check "after the disk grows, t1's run succeeds" test "$status" = 0
check "t1's target equals the source" test "$(digest target t1)" = "$(digest source t1)"

if [ "$failed" -gt 0 ]; then
  tail -n 20 "$work/run.log" "$work/serve.log" >&2 || true
fi
report
