// Why a table needs a person, in the operator's words: the WHY column of
// `tidemark status` and its JSON `why`. Pure: it is given what the state
// database says about the table and the now of that database's clock, and
// reads nothing itself; stale is judged by assess_watermark, as everywhere.
// Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "core/result.h"
#include "core/watermark/watermark_health.h"

namespace tidemark {

// What a table's runs say, as far as a reason needs. Times are Unix
// seconds on the state database's clock.
struct TableRunFacts {
  bool any_run = false;  // a run row exists, finished or not
  // The latest finished run failed.
  bool last_failed = false;
  // Failed runs since the latest success (every failed run when none
  // succeeded), and when the first of them ended.
  std::int64_t failures = 0;
  std::optional<double> failing_since;
  // The latest finished run's error and its kind; no kind for runs
  // recorded before the kind was (state schema version 3).
  std::string last_error;
  std::optional<ErrorKind> last_error_kind;
  std::optional<double> last_success_at;  // when the latest success ended
  // From the latest finished run: how far hi stayed below the source's
  // clock, and what held it there (empty when nothing did).
  std::optional<double> horizon_lag_seconds;
  std::string horizon_held_by;
  // The latest successful reconcile: source rows below the watermark the
  // target lacked, and when it ended; nothing when none ran.
  std::optional<std::int64_t> reconcile_missing;
  std::optional<double> reconcile_at;
  // The latest finished reconcile failed, when, and with this error.
  bool reconcile_failed = false;
  std::optional<double> reconcile_failed_at;
  std::string reconcile_error;
  // The schema drift the latest finished run found ("added column note
  // text; ..."); empty when it found none or did not compare.
  std::string schema_drift;
  // Updates and deletes the source counted that the table's insert-only
  // cursor could not see, since it last ran clean (core/run/change_watch.h);
  // nothing when the table is not watched.
  std::optional<std::int64_t> unseen_changes;
  // From the latest finished run: how long an input had held back a
  // partition the source had completed (a partition table's firing that
  // waited); nothing when it wrote what was due.
  std::optional<double> input_wait_seconds;
};

// The reasons, most urgent first: the first that applies is the one given.
// Readers of the JSON take an unknown `reason` as a problem.
enum class Reason {
  None,         // healthy: nothing to say
  SchemaDrift,  // the latest finished run stopped on schema drift (tidemark_schema_drift)
  Failing,      // the latest finished run failed
  Ahead,     // the watermark is ahead of the source (or of the clock)
  NeverRan,  // no run of the table was ever recorded
  HeldBack,  // stale, because a source transaction held hi back
  Stale,     // stale for any other reason: no success for too long, no new rows
  ReconcileFailing,  // fresh, but the latest reconcile failed: deleted rows stay in the target
  RowsMissing,  // fresh, but the last reconcile found rows missing below the watermark
  UnseenChanges,  // fresh, but its cursor cannot see the updates and deletes the source counted
  Waiting,  // fresh, but a complete partition waits for an input to load it (tidemark_input_wait_seconds)
};

struct TableReason {
  Reason reason = Reason::None;
  std::string text;  // one line for people; empty when healthy
  // SchemaDrift: the changes ("added column note text; ...").
  std::string changes;
  // Failing and SchemaDrift: how many runs, since when; Failing: the
  // latest error's kind (nothing when unrecorded) and its first line.
  std::int64_t failures = 0;
  std::optional<double> failing_since;
  std::optional<ErrorKind> error_kind;
  std::string error_line;
  // HeldBack, Ahead and Waiting: what the latest run said held hi back.
  std::string held_by;
  // Waiting: for how long, in seconds.
  double waited_seconds = 0;
  // UnseenChanges: how many updates and deletes.
  std::int64_t unseen_changes = 0;
};

// Why the table is stale or failing at `now_unix`, against its
// `stale_after`; Reason::None when it is neither. Never fails.
TableReason explain_table(const WatermarkReading& reading, const TableRunFacts& runs, double now_unix,
                          std::chrono::seconds stale_after);

// The reason's name in JSON: "", "schema_drift", "failing", "ahead",
// "never_ran", "held_back", "stale", "reconcile_failing", "rows_missing",
// "unseen_changes", "waiting".
const char* reason_name(Reason reason);

// What held a table's horizon back, as a clause: "held back by pid 42
// (...)", or as it is when it says so itself ("waiting for shop.orders,
// at ...").
std::string held_back_text(const std::string& held_by);

// The first line of an error, for one-line displays.
std::string first_line(const std::string& text);

}  // namespace tidemark
