// The ports one job works through, assembled one way for every kind (a
// load, a batch of loads, a reconcile; from serve and the commands alike):
// its sessions from the pool, or opened; the state store over the state
// database; the source and the target over theirs or, when either could
// not be reached, an UnreachableDatabase standing in for both, so that the
// job still takes its table's lock and records why it failed. One per job,
// on its thread; it holds the job's sessions until it ends.
#pragma once

#include <optional>
#include <utility>

#include "core/config/config_model.h"
#include "core/reconcile/reconcile_ports.h"
#include "core/run/cancel_token.h"
#include "core/run/run_observer.h"
#include "daemon/pg/data/pg_key_side.h"
#include "daemon/pg/data/pg_range_crew.h"
#include "daemon/pg/data/pg_run_ports.h"
#include "daemon/pg/data/pipeline_connections.h"
#include "daemon/pg/data/shared_reads.h"
#include "daemon/pg/libpq/connection_pool.h"
#include "daemon/pg/libpq/read_together.h"
#include "daemon/serve/unreachable_database.h"

namespace tidemark {

// Where a job's sessions come from: the daemon's pool and the reads its
// runs share, or, both empty, sessions of the job's own.
struct JobSessions {
  ConnectionPool* pool = nullptr;
  SharedReads* shared = nullptr;
  // The daemon's places, which a load's range helpers take when free;
  // nothing (a command): its `workers` alone bound them.
  RunPlaces* places = nullptr;
};

class JobPorts {
 public:
  // Opens the sessions of `pipeline`'s jobs. With `pipeline_time_zone` the
  // source and the target read in the pipeline's time zone (a partition
  // table's query). `config` and `cancel` must outlive the ports; so
  // must `meter`, when given, which counts what the source session streams
  // into copies while the ports hold it.
  JobPorts(const Config& config, const PipelineConfig& pipeline, JobSessions from, const CancelToken& cancel,
           bool pipeline_time_zone, RunMeter* meter = nullptr);
  ~JobPorts();
  JobPorts(const JobPorts&) = delete;
  JobPorts& operator=(const JobPorts&) = delete;

  // Why the state database could not be reached: no port can be used, and
  // no run row can say so. Nothing when it was reached.
  const std::optional<Error>& state_unreachable() const { return state_unreachable_; }
  // The summary of `table`'s run that could not start because the state
  // database could not be reached: failed, with why. Requires
  // state_unreachable().
  RunSummary unrecorded_failure(const TableKey& table) const;
  // Why the source's or the target's database could not be reached: the
  // source, the target and the key sides fail every call with it.
  const std::optional<Error>& data_unreachable() const { return data_unreachable_; }

  // Each requires the state reached.
  PgStateStore& state();
  Source& source();
  Target& target();
  // The source and the target over PostgreSQL, for what only a command
  // asks of them; nothing when they were not reached.
  PgSource* pg_source() { return reached_ ? &reached_->source : nullptr; }
  PgTarget* pg_target() { return reached_ ? &reached_->target : nullptr; }
  // Helpers for a first load in ranges; nothing when the data side was
  // not reached.
  RangeCrew* crew() { return crew_ ? &*crew_ : nullptr; }
  // The source's and the target's keys of `table`, for a reconcile; once
  // per job. The table must outlive the ports.
  std::pair<KeySide&, KeySide&> key_sides(const TableConfig& table);

 private:
  PipelineConnections connections_;
  std::optional<Error> state_unreachable_;
  std::optional<Error> data_unreachable_;
  std::optional<PgRunPorts> reached_;
  std::optional<PgRangeCrew> crew_;  // over reached_
  std::optional<PgStateStore> state_alone_;   // the data side was not reached
  std::optional<UnreachableDatabase> missing_;  // likewise
  std::optional<PgKeySide> source_keys_;
  std::optional<PgKeySide> target_keys_;
  // The key sides' answers, read as they come (read_together.h).
  std::optional<ReadTogether> keys_together_;
  PgConnection* metered_ = nullptr;  // the source session counting into a meter
};

}  // namespace tidemark
