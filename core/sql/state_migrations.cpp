#include "core/sql/state_migrations.h"

namespace tidemark {

const std::vector<StateMigration>& state_migrations() {
  static const std::vector<StateMigration> migrations{
      {1, "watermarks, runs, watermark_resets, partitions", R"SQL(
create table tidemark.watermarks (
  pipeline    text not null,
  table_name  text not null,
  value       text not null,
  value_type  text not null check (value_type in ('timestamptz', 'timestamp', 'date', 'integer')),
  moved_at    timestamptz not null,
  updated_at  timestamptz not null,
  last_run_id bigint,
  primary key (pipeline, table_name)
);

create table tidemark.runs (
  run_id           bigserial primary key,
  pipeline         text not null,
  table_name       text not null,
  trigger          text not null,
  window_lo        text,
  window_hi        text,
  watermark_before text,
  watermark_after  text,
  rows_read        bigint not null default 0,
  rows_written     bigint not null default 0,
  status           text not null check (status in ('running', 'success', 'failed')),
  error            text,
  started_at       timestamptz not null default now(),
  finished_at      timestamptz,
  host             text,
  pid              int
);
create index runs_by_table on tidemark.runs (pipeline, table_name, run_id desc);
create index runs_running on tidemark.runs (pipeline, table_name) where status = 'running';

create table tidemark.watermark_resets (
  reset_id   bigserial primary key,
  pipeline   text not null,
  table_name text not null,
  old_value  text,
  new_value  text not null,
  reason     text not null check (reason <> ''),
  reset_by   text not null,
  reset_at   timestamptz not null default now()
);

create table tidemark.partitions (
  pipeline     text not null,
  table_name   text not null,
  partition_lo timestamptz not null,
  partition_hi timestamptz not null,
  status       text not null check (status in ('running', 'done', 'failed')),
  run_id       bigint,
  updated_at   timestamptz not null default now(),
  primary key (pipeline, table_name, partition_lo)
);
)SQL"},
      {2, "safe horizon: cursor samples, and what held each run's hi back", R"SQL(
create table tidemark.cursor_samples (
  pipeline   text not null,
  table_name text not null,
  source     text not null,
  taken_at   bigint not null,
  max_value  bigint not null,
  primary key (pipeline, table_name, taken_at)
);

alter table tidemark.runs
  add column horizon_lag_seconds double precision,
  add column horizon_held_by     text,
  add column watermark_ahead     boolean not null default false,
  add column null_cursor_rows    bigint;
)SQL"},
      {3, "the kind of a failed run's error", R"SQL(
alter table tidemark.runs add column error_kind text check (error_kind in ('transient', 'permanent'));
)SQL"},
      // status and the state monitor look up each table's last success and
      // latest partition: one index probe each, however long the history
      // (a table failing at every firing piles up runs without a success).
      {4, "indexes for the last success and the latest partition of each table", R"SQL(
create index runs_success on tidemark.runs (pipeline, table_name, run_id desc) where status = 'success';
create index runs_failed on tidemark.runs (pipeline, table_name, run_id) where status = 'failed';
create index partitions_done_by_hi on tidemark.partitions (pipeline, table_name, partition_hi) where status = 'done';
create index partitions_done_by_update on tidemark.partitions (pipeline, table_name, updated_at)
  where status = 'done';
)SQL"},
      // Schema drift (docs/drift-and-deletes.md): the columns each
      // incremental table last loaded, written with a load step's record,
      // and what each run found ('' when nothing; null when it did not
      // compare), which status and the gauge after a restart read.
      {5, "schema drift: the columns each table loaded, and the drift each run found", R"SQL(
create table tidemark.loaded_columns (
  pipeline   text not null,
  table_name text not null,
  columns    jsonb not null,
  changed_at timestamptz not null,
  run_id     bigint,
  primary key (pipeline, table_name)
);

alter table tidemark.runs add column schema_drift text;
)SQL"},
      // A reconcile is a run row too (trigger 'reconcile'): what it deleted
      // or marked and what it found missing below the watermark, added as
      // each batch of buckets commits. Null for other runs. status and the
      // state monitor read each table's last reconcile with one index probe.
      {6, "reconcile: rows deleted and rows missing, per run", R"SQL(
alter table tidemark.runs
  add column rows_deleted bigint,
  add column rows_missing bigint;
create index runs_reconcile on tidemark.runs (pipeline, table_name, run_id desc)
  where trigger = 'reconcile' and status = 'success';
)SQL"},
      // status and the state monitor say when a table's latest reconcile
      // failed, and serve's start-up catches up a reconcile it missed: one
      // index probe a table, not a walk back through every load since it.
      {7, "reconcile: each table's latest reconcile, found by index", R"SQL(
create index runs_reconcile_latest on tidemark.runs (pipeline, table_name, run_id desc)
  where trigger = 'reconcile';
)SQL"},
      // Rows whose cursor is infinity or -infinity lie outside every
      // window, like those whose cursor is NULL: each run counts them.
      {8, "rows with an infinite cursor, per run", R"SQL(
alter table tidemark.runs add column infinite_cursor_rows bigint;
)SQL"},
      // A snapshot table's watermark is the time of its last snapshot, a
      // timestamptz kept apart from a cursor's (value_type 'snapshot'), so
      // that a table whose mode changes never resumes from the other
      // mode's value.
      {9, "snapshot tables: their watermark's value type", R"SQL(
alter table tidemark.watermarks drop constraint watermarks_value_type_check;
alter table tidemark.watermarks add constraint watermarks_value_type_check
  check (value_type in ('timestamptz', 'timestamp', 'date', 'integer', 'snapshot'));
)SQL"},
      // Pruning the history asks of each old run whether a later run of
      // its kind on its table succeeded: one index probe, where the index
      // of successes alone made it walk every later success of the table.
      {10, "history pruning: each table's successes by kind, found by index", R"SQL(
create index runs_success_by_trigger on tidemark.runs (pipeline, table_name, trigger, run_id)
  where status = 'success';
)SQL"},
      // The fleet: one row per serve. lease_until and renewed_at are the
      // state database's clock: a member is live while lease_until is
      // ahead of it, and renewed_at is when its last renewal's transaction
      // began, so a member that renewed after another joined has seen it.
      {11, "the fleet: its members and their leases", R"SQL(
create table tidemark.members (
  member_id   text primary key,
  host        text not null,
  pid         integer not null,
  version     text not null,
  started_at  timestamptz not null,
  renewed_at  timestamptz not null,
  lease_until timestamptz not null
);
)SQL"},
      // The firing a run of the daemon served, as its schedule had it:
      // catch-up compares it with the schedule's firings, where a start
      // time on the state database's clock could fall before the firing
      // it ran (a member's clock ahead of the database's) and make the
      // firing look missed. Null for runs from the command line.
      {12, "runs: the firing each run served", R"SQL(
alter table tidemark.runs add column scheduled_for timestamptz;
)SQL"},
      // A reconcile also copies again the rows the target holds with other
      // values (changed without their cursor moving). A load whose cursor
      // cannot see updates or deletes records the source's counters of
      // them (n_tup_upd + n_tup_del) and how far they grew since its
      // table's previous load: changes it could not see.
      {13, "runs: rows changed found by reconcile, and changes a cursor cannot see", R"SQL(
alter table tidemark.runs
  add column rows_changed bigint,
  add column source_changes bigint,
  add column unseen_changes bigint;
create index runs_changes on tidemark.runs (pipeline, table_name, run_id desc) where source_changes is not null;
)SQL"},
      // Where a snapshot table's last snapshot left each side: the oldest
      // transaction still running on the source and on the target
      // (pg_snapshot_xmin). Rows written since have an xmin at or after
      // it, which the next snapshot's diff looks at first.
      {14, "snapshot tables: where each side's last snapshot stood", R"SQL(
create table tidemark.snapshot_horizons (
  pipeline    text not null,
  table_name  text not null,
  source_xmin bigint not null,
  target_xmin bigint not null,
  run_id      bigint not null,
  primary key (pipeline, table_name)
);
)SQL"},
      // What a run is, apart from what fired it: 'load' or 'reconcile'
      // (the job kinds), so that trigger keeps meaning only what fired it.
      // Earlier rows take theirs from trigger. A row whose trigger is
      // 'reconcile' must say it is one: a writer that knows no kind (a
      // binary before this version, still running beside one after it)
      // fails its reconcile's row instead of recording it as a load. The
      // reads by kind get the indexes the reads by trigger had: partial
      // ones for the few reconciles, and a load's latest found through
      // runs_by_table and runs_success, past the rare reconcile, so that a
      // run row costs no more index entries than before. The indexes by
      // trigger stay while a binary before this version may still read
      // by trigger beside one after it (they hold the reconciles only).
      {15, "runs: the job kind of each run", R"SQL(
alter table tidemark.runs
  add column kind text not null default 'load' check (kind in ('load', 'reconcile'));
update tidemark.runs set kind = 'reconcile' where trigger = 'reconcile';
alter table tidemark.runs
  add constraint runs_reconcile_kind check (kind = 'reconcile' or trigger is distinct from 'reconcile');
create index runs_kind_reconcile on tidemark.runs (pipeline, table_name, run_id desc)
  where kind = 'reconcile' and status = 'success';
create index runs_kind_reconcile_latest on tidemark.runs (pipeline, table_name, run_id desc)
  where kind = 'reconcile';
)SQL"},
      // Marts (docs/partitions.md): how long an input held a run back
      // (null when none did), and why a partition done before was written
      // again (null for a first write). A done partition whose input
      // changed below its end is flagged, with why and since when, until a
      // check of it finds it equal to its query or writes it again. Each
      // table with inputs counts the changes of its inputs that flagged
      // its partitions: a write reads the count with its inputs and,
      // under a lock, again as it marks its partition done, so that a
      // change made while it was written is never lost.
      {16, "marts: input waits, rewrites, flagged partitions and the changes of each table's inputs", R"SQL(
alter table tidemark.runs
  add column input_wait_seconds double precision,
  add column rewrite_reason text;
alter table tidemark.partitions
  add column recheck text,
  add column recheck_since timestamptz;
create index partitions_flagged on tidemark.partitions (pipeline, table_name, partition_lo)
  where recheck is not null;
create table tidemark.input_changes (
  pipeline   text not null,
  table_name text not null,
  changes    bigint not null default 0,
  primary key (pipeline, table_name)
);
)SQL"},
      // Pauses (docs/operations.md): each row stops one table's firings
      // (table_name '' for every table of its pipeline: no table is named
      // '') on every member until it is resumed. Every pause and resume
      // is kept in pause_events forever, like the rewinds; a resume that
      // asks for the firings missed while paused says so there, with when
      // the pause it ended began, for the members to catch them up. How far
      // each table's run in flight has copied, written every few seconds
      // from outside its transaction, is what `status` shows of it.
      {17, "pauses: stopped firings and their audit; the progress of runs in flight", R"SQL(
create table tidemark.pauses (
  pipeline   text not null,
  table_name text not null,
  reason     text not null,
  paused_by  text not null,
  paused_at  timestamptz not null default now(),
  primary key (pipeline, table_name)
);
create table tidemark.pause_events (
  event_id     bigserial primary key,
  pipeline     text not null,
  table_name   text not null,
  action       text not null check (action in ('pause', 'resume')),
  reason       text,
  acted_by     text not null,
  acted_at     timestamptz not null default now(),
  catch_up     boolean not null default false,
  paused_since timestamptz
);
create index pause_events_resumes on tidemark.pause_events (pipeline, table_name, acted_at)
  where action = 'resume' and not catch_up;
create table tidemark.run_progress (
  pipeline   text not null,
  table_name text not null,
  rows       bigint not null,
  bytes      bigint not null,
  updated_at timestamptz not null default now(),
  primary key (pipeline, table_name)
);
)SQL"},
      // Ranged first loads (docs/engine.md): each range of a snapshot
      // table's first load in progress, and whether it committed; the
      // plan goes with the step that makes the load whole.
      {18, "ranged first loads: the ranges of each load in progress", R"SQL(
create table tidemark.load_ranges (
  pipeline   text not null,
  table_name text not null,
  range_no   integer not null,
  first_page bigint not null,
  end_page   bigint,
  planned_by bigint not null,
  done_by    bigint,
  done_at    timestamptz,
  primary key (pipeline, table_name, range_no)
);
)SQL"},
  };
  return migrations;
}

}  // namespace tidemark
