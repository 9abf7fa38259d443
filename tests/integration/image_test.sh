#!/usr/bin/env bash
# The container image end to end: `podman build` from the Dockerfile, then
# the container runs `tidemark serve` against the throwaway PostgreSQL
# scripts/test started (its unix socket folder bind-mounted), answers
# /metrics, /healthz and /readyz, runs as a non-root user, passes its own
# HEALTHCHECK, and stops cleanly on `podman stop` (exit 0, "stopped" logged).
# No image registry is reachable: the Dockerfile's Debian base images are
# built here with debootstrap from this machine's apt mirror and cached as a
# tarball in $TIDEMARK_IMAGE_CACHE (default /var/cache/tidemark-test). All of
# podman's storage lives in a temp folder that is removed on exit.
# Exits 77 (ctest: skipped) when podman cannot run containers here.
# Usage: image_test.sh SOURCE_DIR
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
source "$(dirname "$0")/lib.sh"
root=$1
cache=${TIDEMARK_IMAGE_CACHE:-/var/cache/tidemark-test}
base_tar=$cache/debian-bookworm-minbase.tar

say() { printf '==> %s\n' "$*" >&2; }
skip() {
  echo "SKIPPED: $*" >&2
  exit 77
}
for tool in podman runc debootstrap; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/lib/common.sh's ensure_packages installs it)"
done
[ "$(id -u)" -eq 0 ] || skip "podman with runc and debootstrap need root here"

test_setup image
tag=localhost/tidemark-image-test:$$
container=tidemark-image-test-$$

# A podman of our own: storage and configuration in the scratch folder.
# runc, because crun fails on this kernel's hybrid cgroups; nofile and
# nproc at what this machine allows (higher limits are refused).
mkdir -p "$work/podman"
cat >"$work/podman/containers.conf" <<'CONF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
export CONTAINERS_CONF=$work/podman/containers.conf
pod() {
  podman --root "$work/podman/root" --runroot "$work/podman/run" --storage-driver overlay "$@"
}
image_cleanup() {
  pod rm -f -t 0 "$container" >/dev/null 2>&1 || true
  pod rmi -a -f >/dev/null 2>&1 || true
  pod system reset -f >/dev/null 2>&1 || true
  test_cleanup
}
trap image_cleanup EXIT
pod info >/dev/null 2>&1 || skip "podman cannot run here: $(pod info 2>&1 | tail -n 1)"

# The base image: Debian 12 minbase from the apt mirror this machine uses,
# with the same apt sources and settings, so the Dockerfile's apt-get runs.
started=$SECONDS
if [ ! -s "$base_tar" ]; then
  mirror=$(debian_mirror)
  say "building the Debian 12 base image from $mirror (once; cached in $cache)"
  rootfs=$work/rootfs
  debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { tail -n 20 "$work/debootstrap.log" >&2; exit 1; }
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    cp /etc/apt/sources.list.d/debian.sources "$rootfs/etc/apt/sources.list.d/"
    rm -f "$rootfs/etc/apt/sources.list"
  fi
  # A mirror of a snapshot has Release files whose Valid-Until has passed.
  for conf in /etc/apt/apt.conf.d/*; do
    if grep -q 'Check-Valid-Until\|Check-Date' "$conf"; then cp "$conf" "$rootfs/etc/apt/apt.conf.d/"; fi
  done
  chroot "$rootfs" apt-get clean
  rm -rf "$rootfs"/var/lib/apt/lists/*
  mkdir -p "$cache"
  tar -C "$rootfs" -cf "$base_tar.partial" .
  mv "$base_tar.partial" "$base_tar"
  rm -rf "$rootfs"
fi
pod import --quiet "$base_tar" localhost/debian:bookworm >/dev/null
pod tag localhost/debian:bookworm localhost/debian:bookworm-slim
say "base image ready in $((SECONDS - started)) s"

# The image itself. Docker format: OCI images have no HEALTHCHECK.
started=$SECONDS
if ! pod build --format docker --pull=never --network host -t "$tag" -f "$root/Dockerfile" "$root" \
  >"$work/build.log" 2>&1; then
  tail -n 40 "$work/build.log" >&2
  check "podman build" false
  report
fi
say "image built in $((SECONDS - started)) s"
# The build stage is no longer needed: a gigabyte of compilers.
pod image prune -f >/dev/null

check "the image runs as a non-root user" test "$(pod image inspect --format '{{.Config.User}}' "$tag")" = tidemark
check "the image carries a HEALTHCHECK that runs tidemark healthcheck" bash -c \
  "podman --root '$work/podman/root' --runroot '$work/podman/run' image inspect --format '{{json .Config.Healthcheck}}' '$tag' |
   grep -q 'tidemark.*healthcheck'"

# A table to load, in the test's databases on the harness's server.
orders_tables 50

# The container sees the server's socket folder at /run/postgresql and its
# configuration at /etc/tidemark; it shares the host's network, so its
# endpoint is on this machine's loopback (inside its own network namespace
# it would listen on 0.0.0.0, as the Dockerfile says).
port=$(free_port)
mkdir -p "$work/config/pipelines"
cat >"$work/config/tidemark.yaml" <<YAML
state: target
connections:
  source: { dsn: "host=/run/postgresql port=$PGPORT user=postgres dbname=${db}_source" }
  target: { dsn: "host=/run/postgresql port=$PGPORT user=postgres dbname=${db}_target" }
metrics: { listen: "127.0.0.1:$port" }
shutdown_grace: 5s
log: { level: info }
YAML
cat >"$work/config/pipelines/shop.yaml" <<'YAML'
pipeline: shop
source: source
target: target
schedule: "* * * * * *"
tables:
  - { name: orders, source_table: orders, target_table: orders, key: [id], cursor: updated_at, lookback: 1m }
YAML
chmod -R a+rX "$work"

# Without systemd, podman logs that it cannot arm the HEALTHCHECK's timer;
# `podman healthcheck run` below runs the check itself.
pod run -d --name "$container" --network host -v "$PGHOST:/run/postgresql" -v "$work/config:/etc/tidemark:ro" \
  "$tag" >/dev/null 2>>"$work/podman.log"
get() { curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port$1"; }
answers() { [ "$(get "$1")" = "$2" ]; }
check "the container serves /metrics" eventually 30 answers /metrics 200
loaded() { [ "$(psql -X -At -d "${db}_target" -c 'select count(*) from orders')" = 50 ]; }
check "the container loads the table" eventually 30 loaded
check "/metrics carries the runs" bash -c \
  "curl -sf http://127.0.0.1:$port/metrics | grep -q '^tidemark_runs_total{pipeline=\"shop\",status=\"success\",table=\"orders\"}'"
check "/healthz answers 200" eventually 10 answers /healthz 200
check "/readyz answers 200" eventually 30 answers /readyz 200
check "the daemon runs as a non-root user" test "$(pod exec "$container" id -u)" != 0
check "the daemon's process is not root" bash -c \
  "podman --root '$work/podman/root' --runroot '$work/podman/run' top '$container' user | tail -n +2 | grep -vq root"
check "the HEALTHCHECK passes" pod healthcheck run "$container" >/dev/null 2>>"$work/podman.log"

started=$EPOCHREALTIME
pod stop -t 15 "$container" >/dev/null 2>>"$work/podman.log"
elapsed=$(awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
say "podman stop took $elapsed s"
check "podman stop ends it within the grace ($elapsed s)" awk -v e="$elapsed" 'BEGIN { exit !(e < 15) }'
check "podman stop: exit 0" test "$(pod inspect --format '{{.State.ExitCode}}' "$container")" = 0
pod logs "$container" >"$work/container.log" 2>&1
check "the log shows a clean stop" grep -q 'stopped' "$work/container.log"
if [ "$failed" -gt 0 ]; then
  echo "--- container log (tail) ---" >&2
  tail -n 30 "$work/container.log" >&2
fi
report
