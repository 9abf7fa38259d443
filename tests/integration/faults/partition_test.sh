#!/usr/bin/env bash
# Faults: a network partition between the daemon and its databases. A
# writer keeps changing two tables while `serve` loads them every second;
# then every packet between the daemon and the server is dropped for 20 s
# (iptables in the test's own namespace). The daemon stays up, once the
# network is back both tables run again within 25 s, and after the writer
# stops each target equals its source.
# Usage: partition_test.sh TIDEMARK_BINARY
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/netns.sh"
source "$(dirname "$0")/workload.sh"
tidemark=$1
faults_setup partition

psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "create database source" -c "create database target"
target=dbname=target
stamped_tables dbname=source "$target" 1000
ns_daemon_config "$work/tidemark.yaml" 127.0.0.2 "" 'metrics: { listen: "127.0.0.1:19466" }'
every_second_pipeline source target
# The writer goes over the Unix socket, which the partition leaves alone.
start_writer dbname=source 1000

ns_spawn "$work/serve.log" "$tidemark" serve --config "$work/tidemark.yaml"
serve_pid=$spawned
ready() { test "$(in_ns curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:19466/readyz)" = "$1"; }
started=$EPOCHREALTIME
check "both tables run" eventually 20 ran_since "$started"

ns_cut 127.0.0.2
cut=$EPOCHREALTIME
# (Its /readyz goes on answering 200 until the state session's unanswered
# statement times out, 60 s on; docs/operations.md.)
sleep "$(awk -v c="$cut" -v n="$EPOCHREALTIME" 'BEGIN { r = 20 - (n - c); print (r > 0 ? r : 0) }')"
check "the daemon is still up after 20 s cut off" kill -0 "$serve_pid"
check "and still answers /healthz" in_ns curl -sf -o /dev/null http://127.0.0.1:19466/healthz
cut_for=$(seconds_since "$cut")
ns_heal 127.0.0.2
healed=$EPOCHREALTIME
# A statement sent into the partition is retransmitted with a doubling
# backoff: its next try after the network's return, whose reset ends the
# run holding it, may be 13 s away.
check "within 25 s of the network's return both tables run again" eventually 25 ran_since "$healed"
resumed=$(seconds_since "$healed")
check "and /readyz says it is ready" eventually 10 ready 200

stop_writer
check "after the writer stops, both watermarks pass its last write" eventually 20 covered "$EPOCHREALTIME"
targets_equal_sources dbname=source
echo "figures: cut off for ${cut_for} s; both tables ran again ${resumed} s after the network came back"

if [ "$failed" -gt 0 ]; then
  tail -n 30 "$work/serve.log" >&2 || true
fi
report
