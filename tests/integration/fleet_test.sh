#!/usr/bin/env bash
# Three `serve` replicas share 60 tables that fire every 3 s, with a 3 s
# lease. Checked from the run rows (host, pid, started_at, finished_at):
# each member owns a share and every firing runs once, on one member,
# without a lock skip; kill -9 of a member moves its tables to the others
# within 10 s; a member stopped (SIGSTOP) past its lease and continued
# rejoins without a run overlapping another or a firing run twice; SIGTERM
# hands a member's tables over at once; a fourth member takes a share;
# the state database restarting, for less and for more than the lease,
# loses no member and doubles no firing. `tidemark fleet` and `status`
# name the members and owners. The state database lives on a PostgreSQL
# server of this test's own, which it restarts; the harness's server,
# shared with the tests running beside this one, holds source and target.
# Usage: fleet_test.sh TIDEMARK_BINARY
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
source "$(dirname "$0")/lib.sh"
tidemark=$1
test_setup fleet

own_state_server
tables=60
psql -X -q -v ON_ERROR_STOP=1 -d "${db}_source" <<SQL
select format('create table t%s (id int primary key, updated_at timestamptz not null default now());
               insert into t%s values (1, now() - interval ''1 hour'')', g, g)
from generate_series(1, $tables) g \gexec
SQL
psql -X -q -v ON_ERROR_STOP=1 -d "${db}_target" <<SQL
select format('create table t%s (id int primary key, updated_at timestamptz not null)', g)
from generate_series(1, $tables) g \gexec
SQL
daemon_config info
sed -i 's/^state: target$/state: state/' "$work/tidemark.yaml"
cat >>"$work/tidemark.yaml" <<YAML
fleet: { lease: 3s, expect_members: 3 }
YAML
sed -i "/^connections:/a\\  state: { dsn: \"host=$state_dir port=$PGPORT dbname=postgres connect_timeout=2\" }" "$work/tidemark.yaml"
{
  printf 'pipeline: shop\nsource: source\ntarget: target\nschedule: "*/3 * * * * *"\ntables:\n'
  for i in $(seq 1 $tables); do
    printf '  - { name: t%s, source_table: t%s, target_table: t%s, key: [id], cursor: updated_at }\n' "$i" "$i" "$i"
  done
} >"$work/pipelines/shop.yaml"

state() { psql -X -At -h "$state_dir" -d postgres -c "$1"; }

owned() { member_value "$1" tidemark_tables_owned; }
# Every listed member sees `count` members and together they own every table.
# A member exports its share only once it has one: until then (and when
# its metrics do not answer) it has not settled.
settled() {
  local count=$1 sum=0 n share
  shift
  for n in "$@"; do
    [ "$(member_value "$n" tidemark_fleet_members)" = "$count" ] || return 1
    share=$(owned "$n") || return 1
    [[ $share =~ ^[0-9]+$ ]] || return 1
    sum=$((sum + share))
  done
  [ "$sum" = "$tables" ]
}
# Firings that ran twice since epoch $1: two runs of a table that served
# the same firing of its 3 s schedule (a catch-up serves the latest firing
# before it).
doubled() {
  state "select count(*) from (select table_name, floor(extract(epoch from scheduled_for) / 3)
            from tidemark.runs where started_at >= to_timestamp($1) and trigger <> 'manual'
            group by 1, 2 having count(*) > 1) d"
}
# Runs of one table that overlapped another run of it.
overlaps() {
  state "select count(*) from tidemark.runs a join tidemark.runs b
            on a.table_name = b.table_name and a.run_id < b.run_id
           and b.started_at < coalesce(a.finished_at, 'infinity') and a.started_at < coalesce(b.finished_at, 'infinity')"
}
# The tables whose last run since epoch $2 was member pid $1's.
tables_of_pid() {
  state "select distinct on (table_name) table_name || ' ' || pid from tidemark.runs
            where started_at >= to_timestamp($2) order by table_name, run_id desc" | awk -v p="$1" '$2 == p { print $1 }'
}
# Every table in $2 (a list) ran on a member other than pid $1 after epoch $3.
moved() {
  local t
  for t in $2; do
    [ "$(state "select count(*) from tidemark.runs where table_name = '$t' and pid <> $1
                   and started_at > to_timestamp($3)")" -ge 1 ] || return 1
  done
}
skips() {  # lock skips on member N
  curl -sf "http://127.0.0.1:${member_port[$1]}/metrics" |
    awk '/^tidemark_runs_skipped_total\{.*reason="locked"/ { s += $2 } END { print s + 0 }'
}
now() { date +%s; }

start_member 1
start_member 2
start_member 3
check "three members settle: each sees 3, together they own all 60 tables" eventually 30 settled 3 1 2 3
for n in 1 2 3; do
  check "member $n owns a share (owns $(owned $n))" test "$(owned $n)" -ge 8
done

# Steady state. (A member alone fires every table at once; runs it had
# queued for tables the later members took may meet their lock once,
# before the steady state.)
steady=$(now)
declare -A skips_before
for n in 1 2 3; do skips_before[$n]=$(skips $n); done
renewals() { state "select n_tup_upd from pg_stat_user_tables where relid = 'tidemark.members'::regclass"; }
renewals_before=$(renewals)
# The steady state has been watched once every table ran three times in it.
ran_times() {  # ran_times N EPOCH: every table ran at least N times since EPOCH
  test "$(state "select count(*) from (select table_name from tidemark.runs where started_at >= to_timestamp($2)
                   group by 1 having count(*) >= $1) d")" = "$tables"
}
check "steady: every table runs three times" eventually 30 ran_times 3 "$steady"
watched=$(($(now) - steady))
# Three members renewing every second: about 3 a second, and some slack
# for the statistics' delay.
check "regression: members renew once a renewal period, not in a loop ($(($(renewals) - renewals_before)) in ${watched} s)" \
  test $(($(renewals) - renewals_before)) -le $((6 * (watched + 1)))
check "steady: no firing ran twice" test "$(doubled "$steady")" = 0
check "steady: every table ran on one member only" test \
  "$(state "select count(*) from (select table_name from tidemark.runs where started_at >= to_timestamp($steady)
               group by 1 having count(distinct pid) > 1) d")" = 0
check "steady: every table ran" test \
  "$(state "select count(distinct table_name) from tidemark.runs where started_at >= to_timestamp($steady)")" = "$tables"
for n in 1 2 3; do
  check "steady: member $n skipped no run for a held lock" test "$(skips $n)" = "${skips_before[$n]}"
done
fleet_out=$("$tidemark" fleet --config "$work/tidemark.yaml")
check "tidemark fleet lists the three members" test "$(grep -c " ${member_pid[1]} \| ${member_pid[2]} \| ${member_pid[3]} " <<<"$fleet_out")" = 3
check "tidemark status names each table's owner" bash -c \
  "'$tidemark' status --config '$work/tidemark.yaml' --json | grep -q '\"owner\": \"$(hostname) pid ${member_pid[1]}\"'"

# kill -9: the dead member's tables move within 10 s of its death.
dead_tables=$(tables_of_pid "${member_pid[1]}" "$steady")
kill -9 "${member_pid[1]}"
killed=$(now)
check "kill -9: within 10 s every table of the dead member ran on another" eventually 10 \
  moved "${member_pid[1]}" "$dead_tables" "$killed"
check "kill -9: the two left see 2 members and own all tables" eventually 10 settled 2 2 3
check "kill -9: no firing ran twice" test "$(doubled "$killed")" = 0

# SIGSTOP past the lease, then SIGCONT: it rejoins; no overlap, no double.
kill -STOP "${member_pid[2]}"
stopped=$(now)
check "SIGSTOP: the other member takes every table" eventually 10 settled 1 3
# Stopped past its lease, by the database's clock.
lease_over() {
  test "$(state "select count(*) from tidemark.members where pid = ${member_pid[2]} and lease_until > now()")" = 0
}
check "SIGSTOP: the stopped member's lease runs out" eventually 10 lease_over
kill -CONT "${member_pid[2]}"
check "SIGCONT: it rejoins and the two share the tables again" eventually 15 settled 2 2 3
continued=$(now)
check "SIGCONT: every table runs again after the rejoin" eventually 15 ran_times 1 "$((continued + 1))"
check "SIGSTOP/SIGCONT: no firing ran twice" test "$(doubled "$stopped")" = 0
check "SIGSTOP/SIGCONT: no run overlapped another" test "$(overlaps)" = 0

# Drain: SIGTERM hands its tables over at once; a fourth member joins.
drained_tables=$(tables_of_pid "${member_pid[3]}" "$stopped")
kill -TERM "${member_pid[3]}"
drained=$(now)
check "SIGTERM: its tables run on the other member within 10 s" eventually 10 \
  moved "${member_pid[3]}" "$drained_tables" "$drained"
check "SIGTERM: the member says it left" eventually 10 grep -q "fleet: left" "$work/member3.log"
start_member 4
check "a new member takes a share: two members own all tables" eventually 20 settled 2 2 4
# Beside a live member, a new one fires nothing until that one's lease
# (3 s) has passed since it joined: the other may still fire its share.
first_run_gap() {  # seconds from member 4's registration to its first run
  state "select extract(epoch from min(r.started_at) - m.started_at) from tidemark.runs r
           join tidemark.members m on m.pid = r.pid where m.pid = ${member_pid[4]} group by m.started_at"
}
ran_on_4() { [ -n "$(first_run_gap)" ]; }
check "the new member runs" eventually 20 ran_on_4
check "beside a live member, the new one waited out its lease ($(first_run_gap) s)" \
  awk -v g="$(first_run_gap)" 'BEGIN { exit !(g >= 2.9) }'

check "the new member owns about half" test "$(owned 4)" -ge 15
# A firing the hand-over ran twice is in the run rows by the time every
# table has run through two firings after it.
shared=$(now)
check "drain and join: every table runs twice more" eventually 20 ran_times 2 "$((shared + 1))"
check "drain and join: no firing ran twice" test "$(doubled "$drained")" = 0
check "no run of any table overlapped another, all along" test "$(overlaps)" = 0
check "alert input: tidemark_fleet_expected_members is 3" test "$(member_value 2 tidemark_fleet_expected_members)" = 3

# The state database restarts while members 2 and 4 run: first for
# less than the lease, then for more.
for pause in 1 5; do
  state_server stop
  restarted=$(now)
  sleep "$pause"
  state_server start
  check "state database down ${pause} s: both members own every table again within 10 s" eventually 10 settled 2 2 4
  every_table_ran() {
    [ "$(state "select count(distinct table_name) from tidemark.runs where started_at > to_timestamp($1)")" = "$tables" ]
  }
  check "state database down ${pause} s: every table runs again" eventually 10 every_table_ran "$restarted"
  # A firing run twice on the way back is in the run rows by the time
  # every table has run through a firing after it.
  resumed=$(now)
  check "state database down ${pause} s: every table runs once more" eventually 15 ran_times 1 "$((resumed + 1))"
  check "state database down ${pause} s: no firing ran twice" test "$(doubled "$restarted")" = 0
done
check "no run overlapped another through the restarts" test "$(overlaps)" = 0

for n in 2 4; do kill -TERM "${member_pid[$n]}"; done
for n in 2 4; do wait "${member_pid[$n]}" || true; done
check "the members that left removed their rows" test \
  "$(state "select count(*) from tidemark.members where pid in (${member_pid[2]}, ${member_pid[4]}, ${member_pid[3]})")" = 0
check "every run of the daemon recorded the firing it served" test \
  "$(state "select count(*) from tidemark.runs where scheduled_for is null")" = 0

if [ "$failed" -gt 0 ]; then
  for n in 1 2 3 4; do
    echo "--- member $n log (tail) ---" >&2
    tail -n 15 "$work/member$n.log" >&2 || true
  done
fi
report
