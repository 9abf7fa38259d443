#!/usr/bin/env bash
# Two `serve` members share four tables that fire every second. A pause
# of one table stops its firings on both members within a second of the
# command and survives a restart of both; it shows in `status` and in
# tidemark_table_paused on both, and in the audit; `run` by hand still
# runs it. Its resume fires it at its next firing; a pipeline's pause
# holds every table, and its resume with --catch-up runs each once at once
# (trigger resume).
# Usage: pause_test.sh TIDEMARK_BINARY
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
source "$(dirname "$0")/lib.sh"
tidemark=$1
test_setup pause

tables=4
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
echo 'fleet: { lease: 3s }' >>"$work/tidemark.yaml"
{
  printf 'pipeline: shop\nsource: source\ntarget: target\nschedule: "* * * * * *"\ntables:\n'
  for i in $(seq 1 $tables); do
    printf '  - { name: t%s, source_table: t%s, target_table: t%s, key: [id], cursor: updated_at }\n' "$i" "$i" "$i"
  done
} >"$work/pipelines/shop.yaml"

state() { psql -X -At -d "${db}_target" -c "$1"; }
cli() { "$tidemark" "$@" --config "$work/tidemark.yaml"; }
# Runs of table $1 that a member fired (not by hand) after the state
# database's clock read $2 (an expression).
fired_since() {
  state "select count(*) from tidemark.runs where table_name = '$1' and trigger <> 'manual' and started_at > $2"
}
two_members() { [ "$(member_value 1 tidemark_fleet_members)" = 2 ] && [ "$(member_value 2 tidemark_fleet_members)" = 2 ]; }
paused_gauge() { member_value "$1" "tidemark_table_paused{pipeline=\"shop\",table=\"$2\"}"; }
gauges_are() {  # gauges_are TABLE VALUE: on both members
  [ "$(paused_gauge 1 "$1")" = "$2" ] && [ "$(paused_gauge 2 "$1")" = "$2" ]
}
ran() { [ "$(fired_since "$1" "$2")" -gt 0 ]; }

start_member 1
start_member 2
check "two members see each other" eventually 30 two_members
check "t1 fires" eventually 20 ran t1 "'-infinity'"
check "the paused gauge exists at 0 for every table" gauges_are t3 0

out=$(cli pause shop --table t1 --reason "source in maintenance")
check "pause says what it did ($out)" grep -q "paused shop.t1 since" <<<"$out"
paused_at="(select paused_at from tidemark.pauses where table_name = 't1')"
check "both members export t1 as paused" eventually 5 gauges_are t1 1
# A negative check: no event proves that nothing fires. Three seconds
# are three firings of a schedule of every second.
sleep 3
check "no member fires t1 from a second after the pause" test "$(fired_since t1 "$paused_at + interval '1 second'")" = 0
check "the other tables go on firing" eventually 10 ran t2 "$paused_at + interval '1 second'"

out=$(cli status --paused)
shows_t1_paused() {
  [ "$(grep -c "^shop " <<<"$out")" = 1 ] && grep -q "PAUSED" <<<"$out" &&
    grep -q "shop.t1: paused since .*source in maintenance" <<<"$out"
}
check "status --paused shows t1 alone, PAUSED, with the reason" shows_t1_paused
check "status's summary counts one paused table" grep -q "4 tables: .* 1 paused" <<<"$out"
check "the pause is audited" test "$(state "select count(*) from tidemark.pause_events
  where table_name = 't1' and action = 'pause' and reason = 'source in maintenance' and acted_by = '$(id -un)'")" = 1

# Both members stop and start again: the pause is in the state database.
stop_serve "${member_pid[1]}"
stop_serve "${member_pid[2]}"
restarted=$(state "select now()")
start_member 1
start_member 2
check "two members see each other again" eventually 30 two_members
check "t2 fires again after the restart" eventually 20 ran t2 "'$restarted'"
sleep 2
check "t1 stays paused through the restart: no catch-up, no firing" test "$(fired_since t1 "'$restarted'")" = 0
check "both restarted members export t1 as paused" gauges_are t1 1

out=$(cli run shop --table t1 2>&1)
check "run by hand runs a paused table and says it is paused" grep -q "shop.t1 is paused since" <<<"$out"

resumed=$(state "select now()")
cli resume shop --table t1 >/dev/null
check "t1 fires at its next firing after the resume" eventually 5 ran t1 "'$resumed'"
check "a resume without --catch-up makes nothing up" \
  test "$(state "select count(*) from tidemark.runs where trigger = 'resume'")" = 0
check "both members export t1 as resumed" eventually 5 gauges_are t1 0

cli pause shop --reason "the whole shop" >/dev/null
check "a pipeline's pause holds every table, on both members" eventually 5 gauges_are t4 1
sleep 2
cli resume shop --catch-up >/dev/null
caught_up() { [ "$(state "select count(distinct table_name) from tidemark.runs where trigger = 'resume'")" = "$tables" ]; }
check "resume --catch-up runs each table of the pipeline once at once (trigger resume)" eventually 10 caught_up

stop_serve "${member_pid[1]}"
stop_serve "${member_pid[2]}"
report
