#!/usr/bin/env bash
# Faults: a member whose host vanishes in the middle of its runs (every
# packet between it and the databases dropped, then the process killed,
# so that no FIN or RST ever arrives: a power loss). Its two runs hold
# their tables' advisory locks on the target, one waiting for a lock on
# its table, the other past that wait with its reply unacknowledged. With
# no server setting changed, the server ends both sessions within about
# two leases (the sessions tidemark opens tell it to), the other member
# runs both tables within 30 s, nothing runs twice and the target ends
# equal to the source. The fleet's lease is 3 s.
# Usage: vanished_member_test.sh TIDEMARK_BINARY
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/netns.sh"
tidemark=$1
faults_setup vanished

psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "create database source" -c "create database target"
for t in t1 t2; do
  psql -X -q -v ON_ERROR_STOP=1 -d source -c \
    "create table $t (id int primary key, v text, updated_at timestamptz not null default now());
     insert into $t select g, 'row ' || g, now() - interval '1 hour' from generate_series(1, 1000) g"
  psql -X -q -v ON_ERROR_STOP=1 -d target -c "create table $t (id int primary key, v text, updated_at timestamptz not null)"
done

# Member N reaches the databases at ADDRESS and serves metrics on PORT.
member_config() {  # member_config N ADDRESS PORT
  ns_daemon_config "$work/member$1.yaml" "$2" "connect_timeout=2 application_name=member_$1" \
    "metrics: { listen: \"127.0.0.1:$3\" }
fleet: { lease: 3s }"
}
mkdir -p "$work/pipelines"
cat >"$work/pipelines/shop.yaml" <<YAML
pipeline: shop
source: source
target: target
schedule: "* * * * * *"
tables:
  - { name: t1, source_table: t1, target_table: t1, key: [id], cursor: updated_at }
  - { name: t2, source_table: t2, target_table: t2, key: [id], cursor: updated_at }
YAML
member_config a 127.0.0.2 19464
member_config b 127.0.0.1 19465

q() { psql -X -At -d target -c "$1"; }
# sessions_of_a N: member a has N sessions on the target.
sessions_of_a() { test "$(q "select count(*) from pg_stat_activity where application_name = 'member_a'")" = "$1"; }
# waiting_holders_of_a N: N sessions of member a hold an advisory lock and wait for a table's lock.
waiting_holders_of_a() {
  test "$(q "select count(*) from pg_locks l join pg_stat_activity a using (pid)
              where l.locktype = 'advisory' and l.granted and a.application_name = 'member_a'
                and a.wait_event_type = 'Lock'")" = "$1"
}
# hold TABLE: a session of the test's own holds TABLE's strongest lock until released.
hold() {
  psql -X -q -d target -c "set application_name = 'hold_$1'" -c "begin" -c "lock table $1" \
    -c "select pg_sleep(600)" >/dev/null 2>&1 &
  pids+=("$!")
  check "the test holds $1's lock" eventually 10 held "$1"
}
held() {
  test "$(q "select count(*) from pg_locks l join pg_stat_activity a using (pid)
              where a.application_name = 'hold_$1' and l.relation = '$1'::regclass and l.granted")" = 1
}
release() { q "select pg_terminate_backend(pid, 10000) from pg_stat_activity where application_name = 'hold_$1'" >/dev/null; }

# Member a starts alone and fires both tables; each run takes its lock,
# loads into staging and waits for its table, which the test holds.
hold t1
hold t2
ns_spawn "$work/membera.log" "$tidemark" serve --config "$work/membera.yaml"
pid_a=$spawned
check "member a's two runs hold their tables' locks, waiting for the tables" eventually 20 waiting_holders_of_a 2
ns_spawn "$work/memberb.log" "$tidemark" serve --config "$work/memberb.yaml"
members_seen_by_b() {  # members_seen_by_b N: member b sees N live members
  test "$(in_ns curl -sf http://127.0.0.1:19465/metrics | awk '$1 == "tidemark_fleet_members" { print $2 }')" = "$1"
}
check "member b joins: it sees two members" eventually 20 members_seen_by_b 2

# Member a's host vanishes.
ns_vanish "$pid_a" 127.0.0.2
# t1's run gets its table now: it writes and replies into the void.
release t1
check "member b sees member a gone" eventually 15 members_seen_by_b 1
check "the server ends every session of the vanished member within 15 s (about two leases)" \
  eventually 15 sessions_of_a 0
sessions_gone=$(seconds_since "$vanished")
release t2

ran_on_b() {  # both tables have a successful run since the vanishing, on member b
  test "$(q "select count(distinct table_name) from tidemark.runs
              where status = 'success' and started_at > to_timestamp($vanished) and host is not null
                and pid <> $pid_a")" = 2
}
check "member b runs both tables within 30 s" eventually 30 ran_on_b
taken_over=$(seconds_since "$vanished")
check "member a's runs committed nothing" test \
  "$(q "select count(*) from tidemark.runs where pid = $pid_a and status = 'success'")" = 0
check "no two runs of a table overlapped among the runs that finished" test \
  "$(q "select count(*) from tidemark.runs a join tidemark.runs b on a.table_name = b.table_name
         and a.run_id < b.run_id and a.status = 'success' and b.status = 'success'
         and b.started_at < a.finished_at and a.started_at < b.finished_at")" = 0
for t in t1 t2; do
  digest() { psql -X -At -d "$1" -c "select count(*), md5(string_agg(id || v || updated_at, ',' order by id)) from $t"; }
  check "target $t equals the source" test "$(digest target)" = "$(digest source)"
done
echo "figures: member a's sessions gone after ${sessions_gone} s; both tables run on member b ${taken_over} s after member a vanished"

if [ "$failed" -gt 0 ]; then
  for m in a b; do
    echo "--- member $m log (tail) ---" >&2
    tail -n 20 "$work/member$m.log" >&2 || true
  done
fi
report
