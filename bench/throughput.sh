#!/usr/bin/env bash
# Throughput of `tidemark serve` with default settings (max_concurrent_runs
# 4, or WORKERS): TABLES tables, 100 per pipeline file, all on one SCHEDULE, each
# reading one shared source table into its own target table. The first
# firing loads the tables; the firings after it find them unchanged, and
# those are measured: demanded and achieved runs/s, start delay, daemon CPU
# and memory, PostgreSQL backends, queue length, and what one run costs in
# statements and server time. Starts its own throwaway PostgreSQL.
#   TABLES=5000 SCHEDULE="*/30 * * * * *" bench/throughput.sh [TIDEMARK_BINARY]
# The binary defaults to $TIDEMARK_BIN, else the build in $BUILD_DIR.
# SPREAD=1 gives pipeline file p the second (p - 1) mod 60 of a SCHEDULE
# that fires once a minute, as a user with many tables spreads them over
# the minute, instead of firing every table at once.
# FIRINGS measured firings (default 3) after WARMUP unmeasured ones
# (default 1, the first load); STATEMENTS=1 (default) logs every
# statement on the server during one more firing and breaks a run down.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
TABLES=${TABLES:-100}
SCHEDULE=${SCHEDULE:-"*/10 * * * * *"}
FIRINGS=${FIRINGS:-3}
WARMUP=${WARMUP:-1}
ROWS=${ROWS:-10}
STATEMENTS=${STATEMENTS:-1}
SPREAD=${SPREAD:-0}
WORKERS=${WORKERS:-}
tidemark=${1:-${TIDEMARK_BIN:-$(built_tidemark)}}
[ -x "$tidemark" ] || { echo "no tidemark binary at $tidemark" >&2; exit 2; }

bench_port
port=${METRICS_PORT:-$(free_port)}
dir=$(mktemp -d)
serve=
sampler=
backend_sampler=
stop_all() {
  if [ -n "$sampler" ]; then kill "$sampler" 2>/dev/null || true; fi
  if [ -n "$backend_sampler" ]; then kill "$backend_sampler" 2>/dev/null || true; fi
  if [ -n "$serve" ]; then kill -9 "$serve" 2>/dev/null || true; fi
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $dir" >&2; else rm -rf "$dir"; fi
  stop_postgres
}
trap stop_all EXIT

# The schedule's period, from the binary's own cron: three firings, equally spaced.
epoch_of() { date -u -d "$1" +%s; }
mapfile -t next < <("$tidemark" next "$SCHEDULE" --count 3)
period=$(( $(epoch_of "${next[1]}") - $(epoch_of "${next[0]}") ))
if [ "$period" -le 0 ] || [ $(( $(epoch_of "${next[2]}") - $(epoch_of "${next[1]}") )) != "$period" ]; then
  echo "SCHEDULE must fire at a fixed period; it fires at ${next[*]}" >&2
  exit 2
fi

start_postgres
createdb bench_source
createdb bench_target
ddl="(order_id bigint primary key, customer_id bigint, status text, amount numeric(12,2), updated_at timestamptz not null)"
psql -X -q -d bench_source -c "create schema s" -c "create table s.orders $ddl" \
  -c "insert into s.orders select g, g % 50, 'paid', g / 100.0, now() - interval '1 day' + g * interval '1 second'
        from generate_series(1, $ROWS) g" -c "vacuum analyze s.orders"
psql -X -q -d bench_target -c "create schema r"
log "creating $TABLES target tables"
for ((first = 1; first <= TABLES; first += 500)); do
  last=$((first + 499 > TABLES ? TABLES : first + 499))
  psql -X -q -d bench_target -c "do \$\$ begin for i in $first..$last loop
      execute format('create table r.%I $ddl', 't' || i); end loop; end \$\$"
done

mkdir "$dir/pipelines"
cat >"$dir/tidemark.yaml" <<YAML
state: target
connections:
  source: { dsn: "host=$PGHOST port=$PGPORT dbname=bench_source" }
  target: { dsn: "host=$PGHOST port=$PGPORT dbname=bench_target" }
metrics: { listen: "127.0.0.1:$port" }
YAML
[ -z "$WORKERS" ] || echo "max_concurrent_runs: $WORKERS" >>"$dir/tidemark.yaml"
pipelines=$(( (TABLES + 99) / 100 ))
for ((p = 1; p <= pipelines; p++)); do
  {
    echo "pipeline: p$p"
    echo "source: source"
    echo "target: target"
    if [ "$SPREAD" = 1 ]; then
      echo "schedule: \"$(((p - 1) % 60)) ${SCHEDULE#* }\""
    else
      echo "schedule: \"$SCHEDULE\""
    fi
    echo "tables:"
    for ((t = (p - 1) * 100 + 1; t <= p * 100 && t <= TABLES; t++)); do
      echo "  - { name: t$t, source_table: s.orders, target_table: r.t$t, key: [order_id], cursor: updated_at }"
    done
  } >"$dir/pipelines/p$p.yaml"
done
"$tidemark" migrate --config "$dir/tidemark.yaml" >/dev/null

# Start the daemon, and wait until it owns every table: a member joining
# its fleet (here of one) fires nothing for one lease. The first firing
# after that (F1) loads the tables; none has run, so nothing runs before it.
sleep_until() { sleep "$(awk -v t="$1" -v now="$EPOCHREALTIME" 'BEGIN { d = t - now; print (d > 0 ? d : 0) }')"; }
"$tidemark" serve --config "$dir/tidemark.yaml" 2>"$dir/serve.log" &
serve=$!
owned() { curl -sf "http://127.0.0.1:$port/metrics" | awk '$1 == "tidemark_tables_owned" { print $2 }'; }
until [ "$(owned)" = "$TABLES" ]; do
  kill -0 "$serve" 2>/dev/null || { cat "$dir/serve.log" >&2; exit 1; }
  sleep 0.1
done
first_firing=$(epoch_of "$("$tidemark" next "$SCHEDULE" --count 1 --from "$(date -u -d "@$EPOCHSECONDS" +%FT%TZ)")")

window_start=$((first_firing + WARMUP * period))
window_end=$((window_start + FIRINGS * period))

# Samples, until the measurement window ends: client backends on the server
# (every 0.5 s, from one psql session), and the queue length (every
# period/10 s, at least 1 s: a scrape of 10,000 tables costs the daemon
# about a quarter of a CPU second).
queue_every=$(( period / 10 > 1 ? period / 10 : 1 ))
sample_queue() {
  local now
  while :; do
    now=$EPOCHREALTIME
    curl -sf "http://127.0.0.1:$port/metrics" |
      awk -v t="$now" '/^tidemark_runs_queued / { print t, $2 }' >>"$dir/queue" || true
    sleep "$queue_every"
  done
}

ticks=$(getconf CLK_TCK)
proc_cpu() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }  # utime + stime
# PostgreSQL's CPU: the postmaster, its reaped children, and the live ones.
pg_cpu() {
  local postmaster child total
  postmaster=$(head -n 1 "$TIDEMARK_PG_DIR/data/postmaster.pid")
  total=$(awk '{ sub(/^.*\) /, ""); print $12 + $13 + $14 + $15 }' "/proc/$postmaster/stat")
  for child in $(pgrep -P "$postmaster"); do
    total=$((total + $(proc_cpu "$child" 2>/dev/null || echo 0)))
  done
  echo "$total"
}
# The daemon's thread serving /metrics (tidemark-http), apart from the rest.
http_cpu() {
  local task total=0
  for task in /proc/"$serve"/task/*; do
    case "$(cat "$task/comm" 2>/dev/null)" in
      tidemark-http) total=$((total + $(awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "$task/stat"))) ;;
    esac
  done
  echo "$total"
}
metric_sums() {
  curl -sf "http://127.0.0.1:$port/metrics" | awk '
    /^tidemark_run_start_delay_seconds_sum/ { sum += $2 }
    /^tidemark_run_start_delay_seconds_count/ { count += $2 }
    /^tidemark_run_start_delay_seconds_bucket/ { match($0, /le="[^"]*"/); le = substr($0, RSTART + 4, RLENGTH - 5); b[le] += $2 }
    /^tidemark_runs_skipped_total/ && /reason="overrun"/ { overrun += $2 }
    /^tidemark_runs_total/ && /status="failed"/ { failed += $2 }
    END { printf "delay_sum %.6f\ndelay_count %d\noverrun %d\nfailed %d\n", sum + 0, count + 0, overrun + 0, failed + 0
          for (le in b) printf "bucket %s %s\n", le, b[le] }'
}
xacts() {
  psql -X -At -d postgres -c "select sum(xact_commit + xact_rollback) from pg_stat_database
                              where datname in ('bench_source', 'bench_target')"
}
snapshot() {
  {
    echo "time $EPOCHREALTIME"
    echo "daemon $(proc_cpu "$serve")"
    echo "http $(http_cpu)"
    echo "postgres $(pg_cpu)"
    awk '/^cpu / { print "machine_busy", $2 + $3 + $4 + $7 + $8; print "machine_all", $2 + $3 + $4 + $5 + $6 + $7 + $8 }' /proc/stat
    echo "xacts $(xacts)"
    metric_sums
  } >"$dir/snap.$1"
}
value() { awk -v k="$2" '$1 == k { print $2 }' "$dir/snap.$1"; }

: >"$dir/queue"
psql -X -At -F ' ' -d postgres >"$dir/backends" 2>&1 <<<"select extract(epoch from now()), count(*),
    count(*) filter (where datname = 'bench_source'), count(*) filter (where datname = 'bench_target'),
    count(*) filter (where state like 'idle in transaction%' and state_change < now() - interval '5 seconds')
    from pg_stat_activity where backend_type = 'client backend' and pid <> pg_backend_pid() \\watch 0.5" &
backend_sampler=$!
sample_queue &
sampler=$!
log "first firing at $(date -u -d "@$first_firing" +%T), measuring $FIRINGS firing(s) from $(date -u -d "@$window_start" +%T)"
sleep_until "$(awk -v t="$window_start" 'BEGIN { printf "%.3f", t - 0.3 }')"
snapshot start
sleep_until "$(awk -v t="$window_end" 'BEGIN { printf "%.3f", t - 0.6 }')"
snapshot end
kill "$sampler" "$backend_sampler" 2>/dev/null || true
wait "$sampler" "$backend_sampler" 2>/dev/null || true
sampler=
backend_sampler=
rss=$(awk '/VmRSS/ { print $2 }' "/proc/$serve/status")
hwm=$(awk '/VmHWM/ { print $2 }' "/proc/$serve/status")

# One more firing (the one at the window's end) with every statement
# logged by the server, until just before the firing after it.
trace_runs=0
if [ "$STATEMENTS" = 1 ]; then
  psql -X -q -d postgres -c "alter system set log_min_duration_statement = 0" \
    -c "alter system set log_connections = on" -c "alter system set log_line_prefix = '%m [%p] %d %a: '" \
    -c "select pg_reload_conf()" >/dev/null
  trace_from=$(stat -c %s "$TIDEMARK_PG_DIR/server.log")
  trace_start=$(psql -X -At -d postgres -c "select now()")
  sleep_until "$(awk -v t="$((window_end + period))" 'BEGIN { printf "%.3f", t - 0.5 }')"
  trace_stop=$(psql -X -At -d postgres -c "select now()")
  psql -X -q -d postgres -c "alter system reset log_min_duration_statement" -c "alter system reset log_connections" \
    -c "alter system reset log_line_prefix" -c "select pg_reload_conf()" >/dev/null
  tail -c +"$((trace_from + 1))" "$TIDEMARK_PG_DIR/server.log" >"$dir/trace"
  trace_runs=$(psql -X -At -d bench_target -c "select count(*) from tidemark.runs
                                               where started_at >= '$trace_start' and started_at < '$trace_stop'")
fi

# Stop the daemon and look for anything left on the server.
kill -TERM "$serve"
serve_rc=0
wait "$serve" || serve_rc=$?
serve=
left=$(psql -X -At -d postgres -c "select count(*) from pg_stat_activity
                                   where backend_type = 'client backend' and pid <> pg_backend_pid()")
left_locks=$(psql -X -At -d postgres -c "select count(*) from pg_locks where locktype = 'advisory'")

# ---- figures ----
span=$(awk -v a="$(value start time)" -v b="$(value end time)" 'BEGIN { printf "%.6f", b - a }')
demanded=$(awk -v n="$TABLES" -v p="$period" 'BEGIN { print n / p }')
measured_runs=$(psql -X -At -d bench_target -c "select count(*) from tidemark.runs
    where started_at >= to_timestamp($window_start) and started_at < to_timestamp($window_end)")
failed_runs=$(psql -X -At -d bench_target -c "select count(*) from tidemark.runs where status = 'failed'")
complete_tables=$(psql -X -At -d bench_target -c "select count(*) from (select table_name from tidemark.runs
    where started_at >= to_timestamp($window_start) and started_at < to_timestamp($window_end)
    group by pipeline, table_name having count(*) = $FIRINGS) t")
delta() { awk -v a="$(value start "$1")" -v b="$(value end "$1")" 'BEGIN { printf "%.6f", b - a }'; }
overrun=$(delta overrun)

# Start delay from the histogram (every run, exact mean; p95 interpolated
# inside its bucket) ...
delay_mean=$(awk -v s="$(delta delay_sum)" -v c="$(delta delay_count)" 'BEGIN { print (c > 0 ? s / c : "nan") }')
delay_p95_hist=$(join <(awk '$1 == "bucket" { print $2, $3 }' "$dir/snap.start" | sort) \
                      <(awk '$1 == "bucket" { print $2, $3 }' "$dir/snap.end" | sort) |
  awk '{ le = ($1 == "+Inf") ? 1e12 : $1; print le, $3 - $2 }' | sort -g |
  awk '{ le[NR] = $1; n[NR] = $2 } END {
         total = n[NR]; want = 0.95 * total; lo = 0; below = 0
         for (i = 1; i <= NR; i++) {
           if (n[i] >= want) {
             if (le[i] >= 1e12) { printf "above %s s", lo; exit }
             printf "~%.2f s (in the bucket %s-%s s)", lo + (le[i] - lo) * (want - below) / (n[i] - below > 0 ? n[i] - below : 1), lo, le[i]
             exit
           }
           lo = le[i]; below = n[i]
         } }')
# ... and from the run rows: each records the firing it served
# (scheduled_for); started_at is taken after the sessions and the lock, so
# this is a little later than the histogram's start.
delay_runs=$(psql -X -At -F ' ' -d bench_target -c "with d as (
      select extract(epoch from started_at - scheduled_for) as delay from tidemark.runs
      where trigger = 'schedule' and scheduled_for >= to_timestamp($window_start)
            and scheduled_for < to_timestamp($window_end))
    select round(avg(delay)::numeric, 3), round(percentile_cont(0.95) within group (order by delay)::numeric, 3),
           round(percentile_cont(0.99) within group (order by delay)::numeric, 3), round(max(delay)::numeric, 3),
           count(*) filter (where delay <= 5), count(*) from d" |
  awk '{ printf "mean %s s, p95 %s s, p99 %s s, max %s s; %s of %s firings started within 5 s", $1, $2, $3, $4, $5, $6 }')

cpu_pct() { awk -v t="$(delta "$1")" -v hz="$ticks" -v s="$span" 'BEGIN { printf "%.1f", 100 * t / hz / s }'; }
machine_pct=$(awk -v b="$(delta machine_busy)" -v a="$(delta machine_all)" 'BEGIN { printf "%.0f", 100 * b / a }')
read -r backends_max source_max target_max idle_in_tx_max < <(
  awk -v a="$window_start" -v b="$window_end" '$1 >= a && $1 < b {
        for (i = 2; i <= 5; i++) if ($i > m[i]) m[i] = $i }
      END { print m[2] + 0, m[3] + 0, m[4] + 0, m[5] + 0 }' "$dir/backends")
queue_max=$(awk -v a="$window_start" -v b="$window_end" '$1 >= a && $1 < b && $2 > m { m = $2 } END { print m + 0 }' \
  "$dir/queue")
queue_samples=$(awk -v a="$window_start" -v b="$window_end" '$1 >= a && $1 < b' "$dir/queue" | wc -l)
max_connections=$(psql -X -At -d postgres -c "show max_connections")

# A run of an unchanged table, from the daemon's own log line ("..., N ms").
iso() { date -u -d "@$1" +%FT%T; }
run_ms=$(awk -v a="$(iso "$window_start")" -v b="$(iso "$window_end")" '$1 >= a && $1 < b &&
              / info  p[0-9]+\.t[0-9]+: success run .*rows read 0, written 0, [0-9]+ ms/ {
                match($0, /[0-9]+ ms/); print substr($0, RSTART, RLENGTH - 3) }' "$dir/serve.log" | sort -n |
  awk '{ v[NR] = $1; s += $1 } END { if (NR) printf "mean %.1f ms, median %s ms, p95 %s ms (%d runs)", s / NR, v[int((NR + 1) / 2)], v[int(NR * 0.95 + 0.999)], NR }')

printf 'binary: %s\n' "$tidemark"
printf 'tables: %s in %s pipeline files, schedule "%s"%s (every %s s), %s measured firings after %s\n' \
  "$TABLES" "$pipelines" "$SCHEDULE" "$([ "$SPREAD" = 1 ] && echo ", each file on its own second of the minute")" \
  "$period" "$FIRINGS" "$WARMUP"
printf 'demanded: %s runs/s\n' "$demanded"
printf 'achieved: %.1f runs/s (%s runs started in %s s), %.1f%% of demand\n' \
  "$(awk -v r="$measured_runs" -v s="$((window_end - window_start))" 'BEGIN { print r / s }')" "$measured_runs" \
  "$((window_end - window_start))" "$(awk -v r="$measured_runs" -v d="$((TABLES * FIRINGS))" 'BEGIN { print 100 * r / d }')"
printf 'tables that ran at every measured firing: %s of %s; firings coalesced (overrun) in the window: %.0f\n' \
  "$complete_tables" "$TABLES" "$overrun"
printf 'start delay (histogram): mean %.2f s, p95 %s\n' "$delay_mean" "$delay_p95_hist"
printf 'start delay (run rows): %s\n' "$delay_runs"
printf 'daemon CPU: %s%% of one core (of which serving %s scrapes of /metrics: %s%%), RSS %s MiB (peak %s MiB)\n' \
  "$(cpu_pct daemon)" "$queue_samples" "$(cpu_pct http)" "$((rss / 1024))" "$((hwm / 1024))"
others_pct=$(awk -v m="$(delta machine_busy)" -v d="$(delta daemon)" -v p="$(delta postgres)" -v hz="$ticks" -v s="$span" \
  'BEGIN { printf "%.0f", 100 * (m - d - p) / hz / s }')
printf 'PostgreSQL CPU: %s%% of one core; machine busy: %s%% of %s cores (other processes: %s%% of one core)\n' \
  "$(cpu_pct postgres)" "$machine_pct" "$(nproc)" "$others_pct"
printf 'PostgreSQL client backends: max %s (source %s, target %s) of max_connections %s; idle in transaction > 5 s: max %s\n' \
  "$backends_max" "$source_max" "$target_max" "$max_connections" "$idle_in_tx_max"
per_run() { awk -v x="$1" -v r="$measured_runs" -v f="$2" 'BEGIN { printf f, (r ? x / r : 0) }'; }
printf 'per run: %s transactions, %s ms daemon CPU, %s ms PostgreSQL CPU\n' "$(per_run "$(delta xacts)" %.1f)" \
  "$(per_run "$(awk -v t="$(delta daemon)" -v hz="$ticks" 'BEGIN { print 1000 * t / hz }')" %.2f)" \
  "$(per_run "$(awk -v t="$(delta postgres)" -v hz="$ticks" 'BEGIN { print 1000 * t / hz }')" %.2f)"
printf 'queue (tidemark_runs_queued): max %s in %s samples\n' "$queue_max" "$queue_samples"
printf 'run of an unchanged table (log): %s\n' "${run_ms:-none}"
if [ "$STATEMENTS" = 1 ] && [ "$trace_runs" -gt 0 ]; then
  # A statement is a simple query or the execute of an extended one; the
  # parse and bind of an extended one (planning happens at bind) add their
  # time to it. A new session logs "connection authorized".
  awk -v runs="$trace_runs" '
    function tally(text) {
      gsub(/\x27[^\x27]*\x27/, "?", text); gsub(/[0-9]+/, "N", text); gsub(/[ \t]+/, " ", text)
      text = substr(text, 1, 90); time[text] += ms; accounted += ms
      if (executed) { n++; count[text]++ }
    }
    # A statement that starts on a new line: its text is the next (tab-indented) line.
    pending && /^\t/ { pending = 0; tally($0); next }
    pending { pending = 0; tally("(multi-line)") }
    / connection authorized: .*database=bench_(source|target) application_name=tidemark/ { conns++; next }
    !/^[0-9-]+ [0-9:.]+ [A-Z]+ \[[0-9]+\] bench_(source|target) tidemark/ { next }
    / duration: [0-9.]+ ms/ {
      match($0, /duration: [0-9.]+ ms/); ms = substr($0, RSTART + 10, RLENGTH - 13) + 0; total += ms
      if ($0 !~ /  (statement|parse [^:]*|bind [^:]*|execute [^:]*): /) next
      executed = $0 ~ /  (statement|execute [^:]*): /
      stmt = $0; sub(/^.*  (statement|parse [^:]*|bind [^:]*|execute [^:]*): /, "", stmt)
      if (stmt ~ /^[ \t]*$/) pending = 1; else tally(stmt)
    }
    END {
      printf "per run (%d runs traced): %.1f statements, %.2f new sessions, %.2f ms in the server\n", runs, n / runs, conns / runs, total / runs
      # Per run: ms in the statement, how often, how long each (sessions of the
      # state monitor, which refreshes every table at once, count too).
      for (s in count) printf "  %7.3f ms = %7.3f x %8.3f ms  %s\n", time[s] / runs, count[s] / runs, time[s] / count[s], s | "sort -rn"
      close("sort -rn")
      printf "  (statement time, parse and bind included: %.2f ms of the %.2f ms)\n", accounted / runs, total / runs
    }' "$dir/trace"
fi
printf 'failed runs: %s; daemon log: %s error, %s warning lines; serve exit %s\n' "$failed_runs" \
  "$(grep -c '^[^ ]* \(error\|critical\) ' "$dir/serve.log" || true)" \
  "$(grep -c '^[^ ]* warning ' "$dir/serve.log" || true)" "$serve_rc"
# The most frequent of them, numbers (tables, times) folded.
if grep -q '^[^ ]* \(critical\|error\|warning\) ' "$dir/serve.log"; then
  grep '^[^ ]* \(critical\|error\|warning\) ' "$dir/serve.log" | cut -d' ' -f2- | sed 's/[0-9][0-9]*/N/g' |
    sort | uniq -c | sort -rn | head -n 5
fi
printf 'left on the server after SIGTERM: %s sessions, %s advisory locks\n' "$left" "$left_locks"
