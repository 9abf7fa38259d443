// The pauses the state database holds: each stops the firings of one table
// or of a whole pipeline, on every member, until it is resumed. A value
// the daemon's pause watch reads and hands to the scheduler, the metrics
// and `status`; immutable once built, so thread-safe to share.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/run/table_key.h"

namespace tidemark {

struct Pause {
  std::string pipeline;
  std::string table;  // empty: every table of the pipeline
  std::string reason;
  std::string paused_by;
  double paused_at = 0;  // Unix seconds, on the state database's clock

  bool whole_pipeline() const { return table.empty(); }
  // "pipeline p" or "p.t", for messages.
  std::string scope() const;
};

// A resume that asked for the firings missed while paused (`--catch-up`):
// the scope it resumed and when that pause began.
struct CatchUpResume {
  std::string pipeline;
  std::string table;  // empty: every table of the pipeline
  double paused_since = 0;  // Unix seconds

  bool covers(const TableKey& key) const {
    return key.pipeline == pipeline && (table.empty() || key.table == table);
  }
};

class PauseSet {
 public:
  PauseSet() = default;
  explicit PauseSet(std::vector<Pause> pauses);

  // What holds `table` back: its own pause when it has one (the reason
  // an operator gave that table), else its pipeline's; nothing when it fires.
  const Pause* pause_of(const TableKey& table) const;
  bool paused(const TableKey& table) const { return pause_of(table) != nullptr; }
  const std::vector<Pause>& pauses() const { return pauses_; }
  bool empty() const { return pauses_.empty(); }

  friend bool operator==(const PauseSet& a, const PauseSet& b);
  friend bool operator!=(const PauseSet& a, const PauseSet& b) { return !(a == b); }

 private:
  std::vector<Pause> pauses_;  // sorted by (pipeline, table)
};

}  // namespace tidemark
