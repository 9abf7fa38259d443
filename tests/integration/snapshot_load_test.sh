#!/usr/bin/env bash
# mode: snapshot under a real workload: tidemark serve snapshots pgbench's
# accounts, tellers and branches every 2 s while pgbench updates them in
# place, first with its built-in TPC-B-like script, then with transfers
# between two accounts (one transaction moves an amount from one to the
# other, so every consistent state of the table sums to what it summed to
# before). Every snapshot run must succeed; while the transfers run, the
# target must sum to the same total whenever it is looked at (a run that
# read two moments of the source, or committed part of one, would not);
# once the writers stop, every table must equal its source row for row.
# Then, while the transfers run again, two first loads of the accounts in
# ranges (docs/engine.md, "Ranged first loads"): one whole, which must
# end with the transfers' sum (ranges read in more than one snapshot would
# miss it), and one killed (SIGKILL) part way and resumed with the ranges
# left, which must end with it too.
# Usage: snapshot_load_test.sh TIDEMARK_BINARY
#   SNAPSHOT_LOAD_SECONDS  how long each pgbench phase writes (default 10)
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
source "$(dirname "$0")/lib.sh"
# shellcheck source=../../scripts/lib/common.sh
source "$(dirname "$0")/../../scripts/lib/common.sh"
tidemark=$1
load_seconds=${SNAPSHOT_LOAD_SECONDS:-10}
pgbench=$(pg_bin)/pgbench
[ -x "$pgbench" ] || pgbench=$(command -v pgbench) || { echo "pgbench not found" >&2; exit 1; }
test_setup snapshot_load

"$pgbench" -i -q -s 1 "${db}_source" >"$work/init.log" 2>&1
psql -X -q -v ON_ERROR_STOP=1 -d "${db}_target" -c \
  "create table pgbench_accounts (aid int primary key, bid int, abalance int, filler character(84));
   create table pgbench_tellers (tid int primary key, bid int, tbalance int, filler character(84));
   create table pgbench_branches (bid int primary key, bbalance int, filler character(88))"

daemon_config info
{
  printf 'pipeline: bank\nsource: source\ntarget: target\nschedule: "*/2 * * * * *"\ntables:\n'
  for t in accounts tellers branches; do
    key=$(case $t in accounts) echo aid ;; tellers) echo tid ;; branches) echo bid ;; esac)
    printf '  - name: %s\n    mode: snapshot\n    source_table: pgbench_%s\n    target_table: pgbench_%s\n    key: [%s]\n' \
      "$t" "$t" "$t" "$key"
  done
} >"$work/pipelines/bank.yaml"
"$tidemark" serve --config "$work/tidemark.yaml" >"$work/serve.log" 2>&1 &
serve=$!
pids+=("$serve")
loaded() { [ "$(psql -X -At -d "${db}_target" -c 'select count(*) from pgbench_accounts' 2>/dev/null)" = 100000 ]; }
check "the first snapshot copies every account" eventually 30 loaded

table_rows() { psql -X -At -d "$1" -c "select count(*), md5(string_agg(t::text, ',' order by t)) from $2 t"; }
equal() {
  local t
  for t in pgbench_accounts pgbench_tellers pgbench_branches; do
    [ "$(table_rows "${db}_source" "$t")" = "$(table_rows "${db}_target" "$t")" ] || return 1
  done
}
runs() { grep -c ": success run" "$work/serve.log" || true; }
before=$(runs)
check "pgbench's TPC-B-like script updates in place without errors" \
  "$pgbench" -n -c 4 -j 2 -T "$load_seconds" -b tpcb-like "${db}_source" >"$work/tpcb.log" 2>&1
more_runs() { [ "$(runs)" -ge $((before + 6)) ]; }
check "snapshot runs go on during the workload" more_runs

# Transfers: locks taken in id order, so that clients do not deadlock.
cat >"$work/transfer.sql" <<'SQL'
\set a random(1, 100000)
\set b random(1, 100000)
\set first least(:a, :b)
\set second greatest(:a, :b)
\set amount random(1, 1000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance - :amount WHERE aid = :first;
UPDATE pgbench_accounts SET abalance = abalance + :amount WHERE aid = :second;
END;
SQL
# The transfers start from a target that has caught up with the source.
check "after the TPC-B-like load, every table equals its source" eventually 30 equal
total() { psql -X -At -d "$1" -c 'select sum(abalance) from pgbench_accounts'; }
source_total=$(total "${db}_source")
"$pgbench" -n -c 4 -j 2 -T "$load_seconds" -f "$work/transfer.sql" "${db}_source" >"$work/transfer.log" 2>&1 &
transfers=$!
pids+=("$transfers")
accounts_runs() { grep -c "bank.accounts: success run" "$work/serve.log" || true; }
accounts_before=$(accounts_runs)
looks=0
inconsistent=0
while kill -0 "$transfers" 2>/dev/null; do
  [ "$(total "${db}_target")" = "$source_total" ] || inconsistent=$((inconsistent + 1))
  looks=$((looks + 1))
  sleep 0.3
done
check "the transfers ran without errors" wait "$transfers"
# What makes the looks mean something: several of them, with snapshots of
# the accounts committed in between. How many fit in the transfers' time
# depends on how busy the machine is (each look sums 100,000 rows).
accounts_during=$(($(accounts_runs) - accounts_before))
check "the target was looked at during the transfers ($looks looks, $accounts_during snapshots of the accounts)" \
  test "$looks" -ge 5 -a "$accounts_during" -ge 2
check "every look at the target found one consistent snapshot ($inconsistent of $looks did not)" \
  test "$inconsistent" -eq 0

check "once the writers stop, every table equals its source row for row" eventually 30 equal
no_failures() { ! grep -q ": failed" "$work/serve.log"; }
check "no snapshot run failed" no_failures
kill -TERM "$serve"
wait "$serve" || true

# Two first loads of the accounts in 128 kB ranges (about a hundred), on
# three workers, each into a target of its own, while the transfers run: one into a target
# `create_target` makes, the other into one whose writes each take 50 ms
# more (a statement trigger), so that it is killed part way.
psql -X -q -v ON_ERROR_STOP=1 -d "${db}_target" -c \
  "create table accounts_resumed (aid int primary key, bid int, abalance int, filler character(84));
   create function slow_write() returns trigger language plpgsql as \$\$ begin perform pg_sleep(0.05); return null; end \$\$;
   create trigger slow_write after insert on accounts_resumed for each statement execute function slow_write()"
cat >"$work/pipelines/ranged.yaml" <<'YAML'
pipeline: ranged
source: source
target: target
schedule: "@hourly"
create_target: true
ranges: { above: 0B, size: 128kB, workers: 3 }
tables:
  - { name: whole, mode: snapshot, source_table: pgbench_accounts, target_table: accounts_whole, key: [aid] }
  - { name: resumed, mode: snapshot, source_table: pgbench_accounts, target_table: accounts_resumed, key: [aid] }
YAML
"$pgbench" -n -c 4 -j 2 -T $((load_seconds * 6)) -f "$work/transfer.sql" "${db}_source" >"$work/transfer2.log" 2>&1 &
transfers=$!
pids+=("$transfers")
sleep 1
ranged_run() { "$tidemark" run ranged --table "$1" --config "$work/tidemark.yaml" >>"$work/ranged-$1.log" 2>&1; }
check "a first load in ranges while the transfers run" ranged_run whole
check "... went by ranges" grep -q "ranged.whole: first load range 50 " "$work/ranged-whole.log"
check "... read by helpers too, under the load's one snapshot" \
  grep -q "ranged.whole: range helper [12] committed [1-9]" "$work/ranged-whole.log"
sum_of() { psql -X -At -d "${db}_target" -c "select count(*) || ' ' || sum(abalance) from $1"; }
check "... and holds one snapshot of the accounts: their count and the transfers' sum" \
  test "$(sum_of accounts_whole)" = "100000 $source_total"
"$tidemark" run ranged --table resumed --config "$work/tidemark.yaml" >>"$work/ranged-resumed.log" 2>&1 &
run=$!
pids+=("$run")
ranges_done() {
  [ "$(psql -X -At -d "${db}_target" -c "select count(done_by) from tidemark.load_ranges where table_name = 'resumed'")" \
    -ge 30 ] 2>/dev/null
}
check "a second first load commits ranges" eventually 30 ranges_done
kill -KILL "$run" 2>/dev/null || true
{ wait "$run"; } 2>/dev/null || true
# The killed run's sessions end with it; its lock goes with the last.
no_lock_held() {
  [ "$(psql -X -At -d "${db}_target" -c "select count(*) from pg_locks where locktype = 'advisory'
                                         and database = (select oid from pg_database where datname = current_database())")" = 0 ]
}
check "the killed run's lock is gone" eventually 30 no_lock_held
check "the transfers still run when the load resumes" kill -0 "$transfers"
check "killed, it leaves the target with some of the accounts" \
  test "$(psql -X -At -d "${db}_target" -c 'select count(*) < 100000 from accounts_resumed')" = t
check "restarted while the transfers run, it resumes" ranged_run resumed
check "... with the ranges left, then one diff" grep -q "first load resumed, [1-9][0-9]* of [0-9]* ranges loaded again, then" \
  "$work/ranged-resumed.log"
check "... and holds one snapshot of the accounts" test "$(sum_of accounts_resumed)" = "100000 $source_total"
# The transfers ran long enough to outlast a slow machine; enough now.
kill -TERM "$transfers" 2>/dev/null || true
wait "$transfers" || true
check "the transfers ran without errors" bash -c "! grep -qi 'error' '$work/transfer2.log'"

if [ "$failed" -gt 0 ]; then
  echo "--- serve log (tail) ---" >&2
  tail -n 20 "$work/serve.log" >&2
  for log in "$work"/ranged-*.log; do
    [ -f "$log" ] || continue
    echo "--- $(basename "$log") (tail) ---" >&2
    tail -n 10 "$log" >&2
  done
fi
report
