#!/usr/bin/env bash
# Folders depend one way (docs/ARCHITECTURE.md): core's folders each on
# those before it in the order below, core on nothing of daemon, and in
# daemon pg below serve below commands; in daemon/pg, its three rooms
# libpq below state below data; libpq's header only in daemon/pg/libpq's
# .cpp files. Fails naming every include that points the other way.
#
#   tests/lint/layering_test.sh <source root>
set -euo pipefail
root=${1:?usage: layering_test.sh <source root>}
cd "$root"

core_order=(text diff time watermark config sql discover run reconcile fleet schedule)
failed=0
complain() {
  echo "$1: includes $2, which $3" >&2
  failed=1
}

rank() {
  local i
  for i in "${!core_order[@]}"; do
    if [ "${core_order[$i]}" = "$1" ]; then
      echo "$i"
      return
    fi
  done
  echo -1
}

# Every quoted project include, as "file folder/sub": e.g. "core/run/x.cpp core/sql".
includes() {
  grep -rHo --include='*.h' --include='*.cpp' '^#include "\(core\|daemon\)/[a-z_]*/' "$@" |
    sed 's/:#include "/ /; s/\/$//'
}

while read -r file target; do
  from=$(echo "$file" | cut -d/ -f2)
  to=${target#core/}
  case "$target" in
    daemon/*) complain "$file" "$target" "is daemon/: core opens no sockets and reads no files" ;;
    core/*)
      [ "$from" = "$to" ] && continue
      from_rank=$(rank "$from")
      to_rank=$(rank "$to")
      if [ "$from" = health ] || [ "$to" = health ]; then
        complain "$file" "$target" "crosses health/, which stands alone"
      elif [ "$from_rank" -lt 0 ] || [ "$to_rank" -lt 0 ]; then
        complain "$file" "$target" "is a folder this test does not place: add it to core_order"
      elif [ "$to_rank" -gt "$from_rank" ]; then
        complain "$file" "$target" "comes after core/$from in the order ${core_order[*]}"
      fi
      ;;
  esac
done < <(includes core)

while read -r file target; do
  case "$target" in
    daemon/serve | daemon/commands) complain "$file" "$target" "is above daemon/pg" ;;
  esac
done < <(includes daemon/pg)

# daemon/pg's rooms: the libpq edge, the state tables over it, the data
# path over both. Every file of daemon/pg stands in one of them.
pg_rooms=(libpq state data)
pg_rank() {
  local i
  for i in "${!pg_rooms[@]}"; do
    if [ "${pg_rooms[$i]}" = "$1" ]; then
      echo "$i"
      return
    fi
  done
  echo -1
}
while read -r file; do
  [ "$(pg_rank "$(echo "$file" | cut -d/ -f3)")" -ge 0 ] ||
    complain "$file" "nothing" "stands outside daemon/pg's rooms (${pg_rooms[*]})"
done < <(find daemon/pg -name '*.h' -o -name '*.cpp' | sort)
while read -r file target; do
  from=$(echo "$file" | cut -d/ -f3)
  to=$(echo "$target" | cut -d/ -f3)
  [ "$from" = "$to" ] && continue
  if [ "$(pg_rank "$to")" -gt "$(pg_rank "$from")" ]; then
    complain "$file" "$target" "is above daemon/pg/$from in the order ${pg_rooms[*]}"
  fi
done < <(grep -rHo --include='*.h' --include='*.cpp' '^#include "daemon/pg/[a-z_]*/' daemon/pg |
  sed 's/:#include "/ /; s/\/$//')

while read -r file target; do
  if [ "$target" = daemon/commands ]; then complain "$file" "$target" "is above daemon/serve"; fi
done < <(includes daemon/serve)

while read -r file; do
  case "$file" in
    daemon/pg/libpq/*.cpp) ;;
    *) complain "$file" "<libpq-fe.h>" "belongs in daemon/pg/libpq's .cpp files: nothing above sees libpq" ;;
  esac
done < <(grep -rl --include='*.h' --include='*.cpp' '^#include <libpq-fe.h>' core daemon || true)

if [ "$failed" -ne 0 ]; then
  exit 1
fi
echo "core's folders and daemon's depend one way; daemon/pg's rooms stand libpq, state, data; libpq-fe.h stays in libpq"
