// Receives the figures of runs as they happen (metrics, logs, progress).
// Called on the thread that executes the run; implementations that are
// shared between runs must be thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/watermark/cursor_value.h"
#include "core/run/run_ports.h"
#include "core/run/table_key.h"

namespace tidemark {

enum class RunStatus { Success, Failed, SkippedLocked, Cancelled };
std::string_view run_status_name(RunStatus status);

struct RunSummary {
  TableKey table;
  RunStatus status = RunStatus::Failed;
  RunId run = 0;  // 0 when no run row was written
  std::optional<CursorValue> watermark_before;
  std::optional<CursorValue> watermark_after;
  std::optional<Window> range;
  int chunks = 0;  // committed chunks, or partitions written
  bool partitions = false;  // a partition table's run: chunks counts partitions
  std::int64_t rows_read = 0;
  std::int64_t rows_written = 0;
  std::int64_t rows_deleted = 0;  // a snapshot's, counted in rows_written too
  std::string error;
  ErrorKind error_kind = ErrorKind::Transient;  // of a failed run: whether a retry can help
  HorizonReport horizon;  // incremental runs
  std::optional<ReconcileCounts> reconcile;  // a reconcile's totals
  // Incremental runs and backfills that compared the source's columns
  // with what the table loads: whether they drifted
  // (tidemark_schema_drift), and how. Nothing when the run stopped before.
  std::optional<bool> schema_drift;
  std::string schema_changes;  // "added column note text; ..." when drifted
  std::vector<std::string> appended_columns;  // added to the target by a committed chunk
  bool target_created = false;  // create_target: the run's first step created the target table
  // A snapshot run's: how it found what changed, for the log
  // ("unchanged", "diff: 3 changed, 1 missing, 2 gone", "whole: ...").
  std::string snapshot_path;
  // A watched table's changes its cursor cannot see (core/run/change_watch.h):
  // what the source's statistics counted, and how many are unseen so far.
  std::optional<ChangeCount> changes;
  // Partitions written again over ones done, each with why (the run row's
  // and, for a firing, every rewrite's: "2026-12-03 lookback: the query
  // returns 31 rows, the target holds 30"); empty when none was.
  std::string rewrite_reason;
};

// Whether a run that did not succeed can succeed when tried again (a
// failed run's error kind). A cancelled run counts as transient: it was
// stopped by a shutdown, and another would have gone on.
ErrorKind failure_kind(const RunSummary& summary);

// What a run tells as it goes. Every method has a default that ignores
// the event: each listener hears what it needs (a command its chunks, the
// job runner the run rows closed, for the job's end).
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual void on_chunk_committed(const TableKey& /*table*/, const Window& /*window*/,
                                  const ChunkCounts& /*counts*/, const CursorValue& /*watermark*/) {}
  // A run row closed (each partition a firing wrote is a run of its own).
  virtual void on_run_finished(const RunSummary& /*summary*/) {}
  // What a run found of its safe horizon, once it decided it, also when it
  // then writes nothing (a partition table's firing with nothing due).
  virtual void on_horizon(const TableKey& /*table*/, const HorizonReport& /*horizon*/) {}
  // A ranged first load committed `range`: `done` of its `all` ranges are
  // now (a resumed load counts those its earlier runs committed).
  virtual void on_range_committed(const TableKey& /*table*/, const LoadRange& /*range*/, int /*done*/, int /*all*/,
                                  const ChunkCounts& /*counts*/) {}
};

}  // namespace tidemark
