#!/usr/bin/env bash
# Steady state against the script tidemark replaces: after a first load of
# N rows, each round changes 10% of the source's rows and adds 1% new ones,
# then loads that window twice, into two identical targets: once with
# `tidemark run` (lookback 0s, so the window is exactly the rows that
# changed) and once with a hand-written temp staging table +
# INSERT ... ON CONFLICT DO UPDATE over the same [lo, hi), the two in
# alternating order (an even number of rounds gives each the first slot
# equally often). Both targets must end equal to the source. Starts its
# own throwaway PostgreSQL. With BASELINE (another tidemark binary, say the
# last release's) it loads each round's window too, into a third target,
# taking the first, middle and last slot in turn (use a multiple of 3
# rounds), so that the two tidemarks are compared in one run.
#   ROWS=1000000 ROUNDS=4 [BASELINE=/path/to/tidemark] bench/steady_state.sh
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
ROWS=${ROWS:-1000000}
ROUNDS=${ROUNDS:-4}
tidemark=$(built_tidemark)

bench_start
createdb bench_source
createdb bench_tidemark
createdb bench_script
baseline=${BASELINE:-}
targets=(bench_tidemark bench_script)
if [ -n "$baseline" ]; then
  createdb bench_baseline
  targets+=(bench_baseline)
fi
table_ddl="(id bigint primary key, account int, kind text, payload text, amount numeric(12,2),
  updated_at timestamptz not null)"
columns="id, account, kind, payload, amount, updated_at"
psql -X -q -d bench_source -c "create table public.events $table_ddl" \
  -c "create index on public.events (updated_at)" \
  -c "insert into public.events select g, g % 5000, (array['view','click','buy'])[1 + g % 3],
        md5(g::text) || md5((g * 7)::text), (g % 10000) / 100.0,
        now() - interval '30 days' + g * (interval '30 days' / $ROWS) from generate_series(1, $ROWS) g" \
  -c "vacuum analyze public.events"
for db in "${targets[@]}"; do
  psql -X -q -d "$db" -c "create schema raw" -c "create table raw.events $table_ddl"
done

bench_daemon_file "$dir/tidemark.yaml" bench_source bench_tidemark
bench_pipeline events 'key: [id]' 'cursor: updated_at' 'lookback: 0s'
"$tidemark" migrate --config "$dir/tidemark.yaml" >/dev/null
if [ -n "$baseline" ]; then
  bench_daemon_file "$dir/baseline.yaml" bench_source bench_baseline
  "$baseline" migrate --config "$dir/baseline.yaml" >/dev/null
fi

watermark() { psql -X -At -d bench_tidemark -c "select value from tidemark.watermarks where table_name = 'events'"; }

# The script tidemark replaces: the window's rows into a temp staging
# table, then one upsert, in one transaction.
script_load() {
  local lo=$1 hi=$2
  psql -X -q -d bench_source -c "copy (select $columns from public.events
      where updated_at >= '$lo' and updated_at < '$hi') to stdout" |
    psql -X -q -v ON_ERROR_STOP=1 -d bench_script \
      -c "begin" \
      -c "create temp table stage (like raw.events) on commit drop" \
      -c "copy stage ($columns) from stdin" \
      -c "insert into raw.events as t ($columns) select $columns from stage on conflict (id) do update
            set account = excluded.account, kind = excluded.kind, payload = excluded.payload,
                amount = excluded.amount, updated_at = excluded.updated_at" \
      -c "commit"
}

# Every target starts from the same first load.
"$tidemark" run bench --config "$dir/tidemark.yaml" >/dev/null
script_load "-infinity" "$(watermark)"
[ -z "$baseline" ] || "$baseline" run bench --config "$dir/baseline.yaml" >/dev/null

next_id=$((ROWS + 1))
new_rows=$((ROWS / 100))
tidemark_times=()
script_times=()
baseline_times=()
for round in $(seq 1 "$ROUNDS"); do
  lo=$(watermark)
  psql -X -q -d bench_source \
    -c "update public.events set payload = md5(payload), amount = amount + 1, updated_at = clock_timestamp()
          where id % 10 = $((round % 10))" \
    -c "insert into public.events select g, g % 5000, 'buy', md5(g::text), 1, clock_timestamp()
          from generate_series($next_id, $((next_id + new_rows - 1))) g"
  next_id=$((next_id + new_rows))
  # The round's own changes leave ~100 MB of dirty buffers and WAL behind;
  # without a checkpoint here whichever load runs first pays for writing
  # them out (0.4 s more for the same upsert, seen in the server log).
  psql -X -q -d bench_source -c "checkpoint"
  # Rows stamped within the safe horizon's margin wait for a later run.
  sleep 1.1
  if [ -n "$baseline" ]; then
    # Each loads its own window; all of them hold the round's changes.
    hi=$(psql -X -At -d bench_source -c "select now()")
    for slot in 0 1 2; do
      case $(((round + slot) % 3)) in
        0) tidemark_times+=("$(seconds "$tidemark" run bench --config "$dir/tidemark.yaml")") ;;
        1) script_times+=("$(seconds script_load "$lo" "$hi")") ;;
        2) baseline_times+=("$(seconds "$baseline" run bench --config "$dir/baseline.yaml")") ;;
      esac
    done
  elif [ $((round % 2)) = 1 ]; then
    tidemark_times+=("$(seconds "$tidemark" run bench --config "$dir/tidemark.yaml")")
    script_times+=("$(seconds script_load "$lo" "$(watermark)")")
  else
    # The script first, with hi the source's clock: nothing is written
    # after the round's changes, so tidemark's later hi takes the same rows.
    hi=$(psql -X -At -d bench_source -c "select now()")
    script_times+=("$(seconds script_load "$lo" "$hi")")
    tidemark_times+=("$(seconds "$tidemark" run bench --config "$dir/tidemark.yaml")")
  fi
  hi=$(watermark)
  window_rows=$(psql -X -At -d bench_source -c "select count(*) from public.events
                  where updated_at >= '$lo' and updated_at < '$hi'")
  printf 'round %s: window of %s rows: tidemark %.2f s, script %.2f s' "$round" "$window_rows" \
    "${tidemark_times[-1]}" "${script_times[-1]}"
  [ -z "$baseline" ] || printf ', baseline %.2f s' "${baseline_times[-1]}"
  printf '\n'
done

# Every target holds what the source held below the last watermark.
hi=$(watermark)
for db in "${targets[@]}"; do
  got=$(psql -X -At -d "$db" -c "select count(*), md5(string_agg(t::text, ',' order by id)) from raw.events t
          where updated_at < '$hi'")
  want=$(psql -X -At -d bench_source -c "select count(*), md5(string_agg(t::text, ',' order by id)) from public.events t
          where updated_at < '$hi'")
  [ "$got" = "$want" ] || { echo "$db differs from the source: $got vs $want" >&2; exit 1; }
done

t=$(median "${tidemark_times[@]}")
s=$(median "${script_times[@]}")
printf 'rows: %s, rounds: %s (10%% changed + 1%% new each)\n' "$ROWS" "$ROUNDS"
printf 'median: tidemark %.2f s, hand-written upsert %.2f s: tidemark at %.2fx the script'"'"'s speed\n' "$t" "$s" \
  "$(awk -v t="$t" -v s="$s" 'BEGIN { print s / t }')"
if [ -n "$baseline" ]; then
  b=$(median "${baseline_times[@]}")
  printf 'median baseline %.2f s (%.2fx the script'"'"'s speed): tidemark takes %.1f%% of its time\n' "$b" \
    "$(awk -v b="$b" -v s="$s" 'BEGIN { print s / b }')" "$(awk -v t="$t" -v b="$b" 'BEGIN { print 100 * t / b }')"
fi
