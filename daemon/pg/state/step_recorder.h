// What the data path's unit of work writes to the state as it commits a
// step: the step's record, and the input-change counts and flags beside
// it, on the session the state lives on (the target's own when the two are
// one database). PgStateStore implements it; used by one run on one
// thread.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/run/run_ports.h"
#include "daemon/pg/libpq/pg_connection.h"

namespace tidemark {

class StepRecorder {
 public:
  virtual ~StepRecorder() = default;

  // The session the state lives on.
  virtual PgConnection& connection() = 0;
  // A step's record as one statement on `tx` (PgStateStore::record_step).
  virtual Result<StepRecorded> record_step(PgConnection& tx, const StepRecord& step,
                                           std::optional<std::int64_t> input_changes_counted) = 0;
  // tidemark.input_changes locked and counted on `tx` until its
  // transaction ends (PgStateStore::count_input_changes).
  virtual Result<std::optional<std::int64_t>> count_input_changes(PgConnection& tx,
                                                                  const std::optional<TableKey>& own,
                                                                  const std::vector<TableKey>& changed) = 0;
  // The dependents' done partitions flagged on `tx`.
  virtual Status flag_partitions(PgConnection& tx, const DownstreamRecheck& recheck) = 0;
  // Counted and flagged in a transaction of their own.
  virtual Status flag_downstream(const DownstreamRecheck& recheck) = 0;
};

}  // namespace tidemark
