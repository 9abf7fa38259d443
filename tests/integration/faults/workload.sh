# shellcheck shell=bash
# For the faults suite (source it after ../lib.sh): the workload most
# cases put under fire. Two tables, t1 and t2, keyed by id, with an
# `updated_at` a trigger stamps on every update (clock_timestamp()); a
# writer that updates t1's rows and appends to t2 until the file
# $work/stop-writer exists; `serve` loading both every second; and the
# questions asked of the target's state. Every database is named by a
# conninfo string, so that a case may point at a two-host DSN.

# stamped_tables SOURCE TARGET ROWS: t1 and t2 with ROWS rows in SOURCE,
# empty in TARGET.
stamped_tables() {
  local t
  for t in t1 t2; do
    psql -X -q -v ON_ERROR_STOP=1 -d "$1" -c \
      "create table $t (id int primary key, n int not null default 0,
                        updated_at timestamptz not null default clock_timestamp());
       create function ${t}_stamp() returns trigger language plpgsql as
         \$\$begin new.updated_at := clock_timestamp(); return new; end\$\$;
       create trigger ${t}_stamp before update on $t for each row execute function ${t}_stamp();
       insert into $t (id) select generate_series(1, $3)"
    psql -X -q -v ON_ERROR_STOP=1 -d "$2" -c \
      "create table $t (id int primary key, n int not null, updated_at timestamptz not null)"
  done
}

# every_second_pipeline SOURCE_CONNECTION TARGET_CONNECTION [T1_SOURCE]:
# $work/pipelines/shop.yaml, t1 and t2 due every second (t1 read from
# T1_SOURCE, t1 by default).
every_second_pipeline() {
  mkdir -p "${work:?}/pipelines"
  cat >"$work/pipelines/shop.yaml" <<YAML
pipeline: shop
source: $1
target: $2
schedule: "* * * * * *"
tables:
  - { name: t1, source_table: ${3:-t1}, target_table: t1, key: [id], cursor: updated_at }
  - { name: t2, source_table: t2, target_table: t2, key: [id], cursor: updated_at }
YAML
}

# start_writer SOURCE ROWS [SPAN]: the writer in the background, each
# round updating SPAN (1 by default) consecutive rows of t1's ROWS from a
# random one and appending a row to t2; a round that fails (a server
# going away) is tried again. stop_writer ends it after its round.
start_writer() {
  local source=$1 rows=$2 span=${3:-1}
  (
    while [ ! -e "${work:?}/stop-writer" ]; do
      psql -X -q -d "$source" -c \
        "update t1 set n = n + 1 from (select 1 + (random() * ($rows - $span))::int as first) r
          where id between r.first and r.first + $span - 1;
         insert into t2 (id) select coalesce(max(id), 0) + 1 from t2" >/dev/null 2>&1 || true
      sleep 0.05
    done
  ) &
  writer_pid=$!
  pids+=("$writer_pid")
}
stop_writer() {
  touch "$work/stop-writer"
  wait "$writer_pid"
}

# The target's state, asked of $target (a conninfo the case sets).
state_query() { psql -X -At -d "${target:?the conninfo of the target database}" -c "$1" 2>/dev/null; }
# ran_since EPOCH [TABLE]: both tables (or TABLE) have a successful run that started after EPOCH.
ran_since() {
  local want=2 only=%
  [ -n "${2:-}" ] && want=1 only=$2
  test "$(state_query "select count(distinct table_name) from tidemark.runs where status = 'success'
                         and started_at > to_timestamp($1) and table_name like '$only'")" = "$want"
}
# covered EPOCH: both watermarks are past EPOCH (every write before it is loaded).
covered() {
  test "$(state_query "select count(*) from tidemark.watermarks where value::timestamptz > to_timestamp($1)")" = 2
}
# targets_equal_sources SOURCE: one check a table, t1 and t2 row for row.
targets_equal_sources() {
  local t
  for t in t1 t2; do
    check "target $t equals the source" test "$(rows_digest "${target:?}" "$t")" = "$(rows_digest "$1" "$t")"
  done
}
rows_digest() {
  psql -X -At -d "$1" -c "select count(*), md5(string_agg(id || ' ' || n || ' ' || updated_at, ',' order by id)) from $2"
}
