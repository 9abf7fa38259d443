#!/usr/bin/env bash
# How the daemon carries many tables. For each size in TABLES (100 tables
# per pipeline file, on a schedule that does not fire during the
# measurement), REPEAT daemon starts, each measuring:
#   ready      serve start to /readyz 200 (configuration loaded, state
#              database reached)
#   rss        resident memory when ready, and after SCRAPES scrapes
#   scrape     the median time of SCRAPES scrapes of /metrics, its size
#              and its series
#   idle cpu   utime+stime over IDLE seconds with nothing firing, in % of
#              one core (the state monitor's refresh included)
# then prints the median of the starts for each size and the cost of one
# more table (the slope between the smallest and the largest size).
# Starts its own throwaway PostgreSQL.
#   bench/many_tables.sh                              # 1,000 10,000 50,000
#   TABLES=10000 REPEAT=1 IDLE=10 bench/many_tables.sh
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
read -r -a sizes <<<"${TABLES:-1000 10000 50000}"
REPEAT=${REPEAT:-3}
SCRAPES=${SCRAPES:-5}
IDLE=${IDLE:-30}
tidemark=$(built_tidemark)

serve=
bench_start
stop_serve() { [ -z "$serve" ] || kill "$serve" 2>/dev/null; }
bench_on_exit stop_serve
# The tables every pipeline names (validate checks each in the database).
bench_many_tables_db
port=$(free_port)
ticks=$(getconf CLK_TCK)
url="http://127.0.0.1:$port"

# A field of /proc/PID/status, in KiB.
status_kib() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
# utime + stime of PID, in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# Writes the configuration for N tables into $dir/N.
write_config() {
  local n=$1 conf=$dir/$1
  mkdir -p "$conf/pipelines"
  bench_many_tables_daemon_file "$conf/tidemark.yaml" "$port"
  bench_many_pipelines "$conf/pipelines" "$n" "0 0 1 1 *" ", lookback: 1h"
}

# One daemon start for N tables; prints one line of figures:
# validate ready rss_ready rss_scraped hwm scrape bytes series cpu_percent
measure_once() {
  local n=$1 conf=$dir/$1 start validate ready rss_ready rss_scraped hwm bytes series cpu0 cpu1 cpu
  local times=()
  start=$EPOCHREALTIME
  "$tidemark" validate --config "$conf/tidemark.yaml" >/dev/null
  validate=$(seconds_since "$start")

  start=$EPOCHREALTIME
  "$tidemark" serve --config "$conf/tidemark.yaml" 2>"$dir/serve.log" &
  serve=$!
  until [ "$(curl -s -o /dev/null -w '%{http_code}' "$url/readyz")" = 200 ]; do
    kill -0 "$serve" 2>/dev/null || { cat "$dir/serve.log" >&2; exit 1; }
    sleep 0.01
  done
  ready=$(seconds_since "$start")
  rss_ready=$(status_kib "$serve" VmRSS)
  sleep 2  # the state monitor's first refresh has landed in the gauges
  for _ in $(seq 1 "$SCRAPES"); do
    times+=("$(curl -sf -o "$dir/scrape.txt" -w '%{time_total}' "$url/metrics")")
  done
  bytes=$(wc -c <"$dir/scrape.txt")
  series=$(grep -vc '^#' "$dir/scrape.txt")
  rss_scraped=$(status_kib "$serve" VmRSS)
  hwm=$(status_kib "$serve" VmHWM)
  cpu0=$(cpu_ticks "$serve")
  sleep "$IDLE"
  cpu1=$(cpu_ticks "$serve")
  cpu=$(awk -v a="$cpu0" -v b="$cpu1" -v t="$ticks" -v s="$IDLE" 'BEGIN { printf "%.2f", 100 * (b - a) / t / s }')
  kill -TERM "$serve"
  wait "$serve" || true
  serve=
  echo "$validate $ready $rss_ready $rss_scraped $hwm $(median "${times[@]}") $bytes $series $cpu"
}

printf 'load average before: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
declare -A result
for n in "${sizes[@]}"; do
  write_config "$n"
  runs=()
  for r in $(seq 1 "$REPEAT"); do
    measure_once "$n" >"$dir/line"  # not in $(...): the trap must see $serve
    line=$(<"$dir/line")
    printf 'tables %6d, start %d: %s\n' "$n" "$r" "$line" >&2
    runs+=("$line")
  done
  # The median of each column over the starts.
  medians=()
  for col in 1 2 3 4 5 6 7 8 9; do
    mapfile -t column < <(printf '%s\n' "${runs[@]}" | awk -v c="$col" '{ print $c }')
    medians+=("$(median "${column[@]}")")
  done
  result[$n]="${medians[*]}"
done
printf 'load average after: %s\n\n' "$(cut -d' ' -f1-3 /proc/loadavg)"

printf '| tables | validate s | ready s | RSS ready MiB | RSS after scrapes MiB | peak RSS MiB | scrape s | scrape MB | series | idle CPU %% |\n'
printf '|---|---|---|---|---|---|---|---|---|---|\n'
for n in "${sizes[@]}"; do
  read -r validate ready rss_ready rss_scraped hwm scrape bytes series cpu <<<"${result[$n]}"
  awk -v n="$n" -v v="$validate" -v r="$ready" -v a="$rss_ready" -v b="$rss_scraped" -v h="$hwm" -v s="$scrape" \
    -v y="$bytes" -v z="$series" -v c="$cpu" 'BEGIN {
      printf "| %d | %.2f | %.2f | %.0f | %.0f | %.0f | %.3f | %.1f | %d | %.2f |\n", n, v, r, a / 1024, b / 1024, h / 1024, s, y / 1e6, z, c
    }'
done
if [ "${#sizes[@]}" -gt 1 ]; then
  lo=${sizes[0]} hi=${sizes[${#sizes[@]} - 1]}
  read -r -a a <<<"${result[$lo]}"
  read -r -a b <<<"${result[$hi]}"
  awk -v n="$((hi - lo))" -v v0="${a[0]}" -v v1="${b[0]}" -v r0="${a[1]}" -v r1="${b[1]}" -v m0="${a[3]}" -v m1="${b[3]}" \
    -v s0="${a[5]}" -v s1="${b[5]}" -v y0="${a[6]}" -v y1="${b[6]}" -v z0="${a[7]}" -v z1="${b[7]}" \
    -v c0="${a[8]}" -v c1="${b[8]}" -v lo="$lo" -v hi="$hi" 'BEGIN {
      printf "\none more table (slope from %d to %d tables):\n", lo, hi
      printf "| validate | ready | RSS after scrapes | scrape | scrape size | series | idle CPU |\n|---|---|---|---|---|---|---|\n"
      printf "| %.1f us | %.1f us | %.2f KiB | %.2f us | %.0f bytes | %.1f | %.5f %% of a core |\n",
        (v1 - v0) / n * 1e6, (r1 - r0) / n * 1e6, (m1 - m0) / n, (s1 - s0) / n * 1e6, (y1 - y0) / n, (z1 - z0) / n, (c1 - c0) / n
    }'
fi
