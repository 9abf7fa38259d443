// The pauses in tidemark.pauses and their audit, tidemark.pause_events:
// what `pause` and `resume` write and every member of the fleet reads.
// Writers serialise on one transaction-level advisory lock, so the
// audit's event ids commit in order and a reader that remembers the last
// one it saw misses no resume. Owns no connection; used by one thread at
// a time, like the one it is given.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/run/table_key.h"
#include "core/schedule/pause_set.h"
#include "daemon/pg/libpq/pg_connection.h"

namespace tidemark {

// Where pause and resume say that the pauses changed; members listen.
inline constexpr std::string_view kPausesChannel = "tidemark_pauses";

// What a pause did: a new pause, or a new reason for one already there
// (its start and who began it kept; the audit says who gave the reason).
struct PauseWritten {
  Pause pause;  // as stored
  bool already_paused = false;
};

// What a member reads each time: every pause, the resumes that asked for a
// catch-up since the event it last saw, and the newest event.
struct PauseReading {
  PauseSet pauses;
  std::vector<CatchUpResume> catch_ups;  // oldest first
  std::int64_t last_event = 0;
};

class PauseBook {
 public:
  explicit PauseBook(PgConnection& connection) : connection_(connection) {}

  // Pauses `pause.pipeline` (every table) or `pause.table`, with its
  // reason and who asked; paused_at is the database's clock. Audited and
  // announced in the same transaction. Requires the schema at version 17.
  Result<PauseWritten> pause(const Pause& pause);

  // Ends the pauses of a table (its own), or of a pipeline (its own and
  // every table's of it), each audited with `by` and `catch_up`, and
  // announced. Returns the pauses it ended, none when none held.
  Result<std::vector<Pause>> resume(const std::string& pipeline, const std::optional<std::string>& table,
                                    bool catch_up, const std::string& by);

  // When each of `tables` was last resumed without --catch-up (its own
  // pause or its pipeline's), in Unix seconds: from then on the firings
  // missed while it was paused are not made up. Tables never so resumed
  // are absent; none from a schema older than version 17.
  Result<std::map<TableKey, std::int64_t>> resumed_at(const std::vector<TableKey>& tables);

  // Every pause, and the catch-up resumes recorded after event `after`
  // (none when nothing: a first read only learns where the audit stands).
  // A schema older than version 17 has no pauses. One statement.
  Result<PauseReading> read(std::optional<std::int64_t> after);

 private:
  // Whether tidemark.pauses exists: asked until it does.
  bool has_pauses();

  PgConnection& connection_;
  std::optional<bool> has_pauses_;
};

}  // namespace tidemark
