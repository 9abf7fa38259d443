#!/usr/bin/env bash
# The integration tests' database is the throwaway server scripts/test
# started, never a system service: its data folder is under TIDEMARK_PG_DIR.
set -euo pipefail
: "${TIDEMARK_PG_DIR:?integration tests run through scripts/test, which starts their PostgreSQL}"
data_dir=$(psql -X -At -d postgres -c "select current_setting('data_directory')")
case "$data_dir" in
  "$TIDEMARK_PG_DIR"/*) echo "1 passed, 0 failed" ;;
  *) echo "connected to $data_dir, not the throwaway server in $TIDEMARK_PG_DIR" >&2; exit 1 ;;
esac
