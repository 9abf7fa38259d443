// What every kind of run works with: its configuration and its ports.
// A bundle of references, built by the caller (daemon/serve/job_runner, the
// backfill commands, tests) for one run; it owns nothing and must not
// outlive what it refers to. Used on the run's one thread.
#pragma once

#include "core/run/cancel_token.h"
#include "core/run/range_crew.h"
#include "core/config/config_model.h"
#include "core/run/run_observer.h"
#include "core/run/run_ports.h"
#include "core/run/table_ownership.h"

namespace tidemark {

struct RunContext {
  const PipelineConfig& pipeline;
  const TableConfig& table;
  StateStore& state;
  Source& source;
  Target& target;
  RunObserver& observer;
  const CancelToken& cancel;
  // Asked once the run holds its table's lock: the fleet's view in the
  // daemon, sole_owner() for a command run by hand.
  const TableOwnership& ownership;
  // Helpers for a first load in ranges; nothing: the run reads them alone.
  RangeCrew* crew = nullptr;

  TableKey key() const { return TableKey{pipeline.name, table.name}; }
};

}  // namespace tidemark
