#!/usr/bin/env bash
# Reconcile under concurrent writers: tidemark serve loads a table every
# 2 s and reconciles it every 5 s while pgbench inserts, updates and
# deletes its rows. Neither database's time zone is UTC, and a
# `timestamp` column is loaded into `timestamptz` (read in the source's
# zone, whatever the target's), so that loads and reconciles must read
# values alike. Every reconcile must find no row
# missing below the watermark (a load that skipped one would be a broken
# watermark), and once the writers stop, one load and one reconcile later,
# the target must equal the source row for row.
# Usage: reconcile_load_test.sh TIDEMARK_BINARY
#   RECONCILE_LOAD_SECONDS  how long pgbench writes (default 15)
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
source "$(dirname "$0")/lib.sh"
# shellcheck source=../../scripts/lib/common.sh
source "$(dirname "$0")/../../scripts/lib/common.sh"
tidemark=$1
load_seconds=${RECONCILE_LOAD_SECONDS:-15}
pgbench=$(pg_bin)/pgbench
[ -x "$pgbench" ] || pgbench=$(command -v pgbench) || { echo "pgbench not found" >&2; exit 1; }
test_setup reconcile_load

psql -X -q -v ON_ERROR_STOP=1 -d "${db}_target" -c \
  "alter database ${db}_target set timezone to 'Asia/Kolkata'"
psql -X -q -v ON_ERROR_STOP=1 -d "${db}_source" -c \
  "alter database ${db}_source set timezone to 'America/New_York'"
psql -X -q -v ON_ERROR_STOP=1 -d "${db}_source" -c \
  "create table orders (id bigint primary key, placed timestamp not null, v int not null,
                        updated_at timestamptz not null default clock_timestamp());
   create index on orders (updated_at);
   insert into orders (id, placed, v)
   select g, timestamp '2025-01-01' + g * interval '1 minute', 0 from generate_series(1, 20000) g"
psql -X -q -v ON_ERROR_STOP=1 -d "${db}_target" -c \
  "create table orders (id bigint primary key, placed timestamptz not null, v int not null,
                        updated_at timestamptz not null)"

daemon_config info
cat >"$work/pipelines/shop.yaml" <<'YAML'
pipeline: shop
source: source
target: target
schedule: "*/2 * * * * *"
tables:
  - name: orders
    source_table: orders
    target_table: orders
    key: [id]
    cursor: updated_at
    deletes: { reconcile: "*/5 * * * * *" }
YAML
"$tidemark" serve --config "$work/tidemark.yaml" >"$work/serve.log" 2>&1 &
serve=$!
pids+=("$serve")
loaded() { [ "$(psql -X -At -d "${db}_target" -c 'select count(*) from orders' 2>/dev/null)" = 20000 ]; }
check "the first load copies every row" eventually 30 loaded

# A third of the transactions each: insert (or bump) a row, update one,
# delete one, over ids half again as many as the table holds.
cat >"$work/writes.sql" <<'SQL'
\set id random(1, 30000)
\set op random(1, 3)
\if :op = 1
INSERT INTO orders (id, placed, v) VALUES (:id, timestamp '2025-01-01' + :id * interval '1 minute', 0)
  ON CONFLICT (id) DO UPDATE SET v = orders.v + 1, updated_at = clock_timestamp();
\elif :op = 2
UPDATE orders SET v = v + 1, updated_at = clock_timestamp() WHERE id = :id;
\else
DELETE FROM orders WHERE id = :id;
\endif
SQL
check "pgbench writes without errors" \
  "$pgbench" -n -c 4 -j 2 -R 2000 -T "$load_seconds" -f "$work/writes.sql" "${db}_source" >"$work/pgbench.log" 2>&1

# The daemon's lines for finished reconciles: "... N rows deleted, M missing ...".
reconciles() { grep -oE 'reconcile success run [0-9]+, .*, [0-9]+ rows deleted, [0-9]+ missing' "$work/serve.log" || true; }
deleted_during_load() { reconciles | awk '{ d += $(NF - 4) } END { exit !(d > 0) }'; }
check "reconciles during the load delete the rows deleted in the source" deleted_during_load
none_missing() { reconciles | awk '{ m += $(NF - 1) } END { exit !(NR > 0 && m == 0) }'; }
check "no reconcile finds a row missing below the watermark" none_missing

rows() {  # rows DB: every row, its timestamps as UTC instants, hashed
  PGTZ=$2 psql -X -At -d "$1" -c "select count(*), md5(string_agg(id || ':' || v || ':' || $3, ',' order by id))
                                   from orders"
}
equal() {
  [ "$(rows "${db}_source" America/New_York "(placed::timestamptz at time zone 'UTC')")" = \
    "$(rows "${db}_target" UTC "(placed at time zone 'UTC')")" ]
}
check "once the writers stop, the target equals the source row for row" eventually 30 equal
kill -TERM "$serve"
wait "$serve" || true

if [ "$failed" -gt 0 ]; then
  echo "--- serve log (tail) ---" >&2
  tail -n 20 "$work/serve.log" >&2
  tail -n 5 "$work/pgbench.log" >&2
fi
report
