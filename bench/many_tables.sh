#!/usr/bin/env bash
# How the daemon carries many tables: configuration load time, start-up
# to READY-equivalent (metrics served), resident memory, and the size and
# time of one scrape, for N tables (100 per pipeline) that never fire
# during the measurement. Starts its own throwaway PostgreSQL.
#   TABLES=10000 bench/many_tables.sh
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../scripts/lib/common.sh
source "$(dirname "$0")/../scripts/lib/common.sh"
TABLES=${TABLES:-10000}
tidemark=$(built_tidemark)

export PGPORT=${PGPORT:-55498}
dir=$(mktemp -d)
trap 'kill "${serve:-0}" 2>/dev/null || true; rm -rf "$dir"; stop_postgres' EXIT
start_postgres
createdb bench
port=19555
mkdir "$dir/pipelines"
cat >"$dir/tidemark.yaml" <<YAML
state: db
connections:
  db: { dsn: "host=$PGHOST port=$PGPORT dbname=bench" }
metrics: { listen: "127.0.0.1:$port" }
log: { level: warn }
YAML
pipelines=$(( (TABLES + 99) / 100 ))
for p in $(seq 1 "$pipelines"); do
  {
    echo "pipeline: p$p"
    echo "source: db"
    echo "target: db"
    echo 'schedule: "0 0 1 1 *"'
    echo "tables:"
    for t in $(seq 1 100); do
      echo "  - { name: t$t, source_table: s.t, target_table: r.t$t, key: [id], cursor: updated_at, lookback: 1h }"
    done
  } >"$dir/pipelines/p$p.yaml"
done

start=$EPOCHREALTIME
"$tidemark" validate --config "$dir/tidemark.yaml" >/dev/null
validate=$(seconds_since "$start")

start=$EPOCHREALTIME
"$tidemark" serve --config "$dir/tidemark.yaml" 2>"$dir/serve.log" &
serve=$!
until curl -sf "http://127.0.0.1:$port/metrics" -o /dev/null; do sleep 0.05; done
ready=$(seconds_since "$start")
sleep 2  # let the state monitor's first refresh land
start=$EPOCHREALTIME
bytes=$(curl -sf "http://127.0.0.1:$port/metrics" | wc -c)
scrape=$(seconds_since "$start")
series=$(curl -sf "http://127.0.0.1:$port/metrics" | grep -vc '^#')
rss=$(awk '/VmRSS/ { print $2 }' "/proc/$serve/status")

printf 'tables: %s in %s pipeline files\n' "$TABLES" "$pipelines"
printf 'validate (parse and check every file, next firings): %.2f s\n' "$validate"
printf 'serve start to metrics served: %.2f s\n' "$ready"
printf 'one scrape: %.3f s, %s bytes, %s series\n' "$scrape" "$bytes" "$series"
printf 'resident memory: %s MiB\n' "$((rss / 1024))"
