// The safe horizon (SPEC §3): the highest cursor value below which no row
// can still appear in the source, decided from what the source reports
// about its clock, its largest cursor and its open transactions. Pure
// functions over values; thread-safe.
//
// Rows become visible when they commit, but their cursor values are
// stamped earlier (now() at transaction start, an id from a sequence), so
// hi must stay below anything a transaction still open may write.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/watermark/cursor_value.h"
#include "core/result.h"

namespace tidemark {

// Microseconds since 1970-01-01 UTC on the source's clock.
using SourceMicros = std::int64_t;

// A transaction open on the source that may still write rows.
struct OpenTransaction {
  // When it began (pg_stat_activity.xact_start), or its statement when that
  // began earlier (a procedure that commits: statement_timestamp() stays
  // the CALL's start); for a prepared (two-phase) transaction, when it was
  // prepared: its start is not recorded anywhere.
  SourceMicros started = 0;
  bool prepared = false;
  int pid = 0;                   // 0 for a prepared transaction
  std::string application_name;  // for a prepared transaction, its gid
  std::string state;             // pg_stat_activity.state, or "prepared"
};

// One (source clock, max cursor) observation of an integer-cursor table.
// `max` was read in a snapshot taken no later than `taken_at`.
struct CursorSample {
  SourceMicros taken_at = 0;
  std::int64_t max = 0;
};

// What the source reported when a run asked for its horizon. The clock is
// read after the largest cursor and before the open transactions are
// listed; that order is what makes the rule below sound.
struct HorizonReading {
  SourceMicros clock = 0;
  // Integer cursors: max(cursor) as of `clock`; nothing when the table is empty.
  std::optional<std::int64_t> max_cursor;
  // Integer cursors: the largest CACHE of the sequences the cursor column
  // takes its ids from (its default's, its identity's). Above 1 each
  // session holds a block of ids of its own and may commit one of them
  // long after larger ones, in a transaction begun after any observation.
  std::int64_t sequence_cache = 1;
  // Integer cursors: the largest id those sequences have handed out (their
  // last_value), when this role may read it. Ids up to it were issued, so
  // a watermark up to it + 1 was reached, even after the rows that held
  // the largest ids were deleted; a sequence restarted below the
  // watermark (TRUNCATE ... RESTART IDENTITY) leaves it ahead.
  std::optional<std::int64_t> sequence_last;
  // The oldest open transaction that may still write; nothing when none.
  std::optional<OpenTransaction> oldest;
  // False when the role cannot see other sessions (no pg_monitor or
  // pg_read_all_stats): then `oldest` means nothing.
  bool sees_all_sessions = true;
  // The source is a hot standby and no primary was consulted: `oldest`
  // covers only the standby's own (read-only) sessions.
  bool standby_without_primary = false;
  // A session of the source database that reports no activity
  // (track_activities off: pg_stat_activity shows it 'disabled', without
  // xact_start), described for messages; empty when there is none. Whether
  // it has a transaction open, and since when, cannot be seen.
  std::string unreported_session;
  // The source is a standby that has not replayed everything it received:
  // the commit time of the last transaction it replayed; hi stays below it.
  std::optional<SourceMicros> replayed_until;
};

// A source instant as a timestamptz cursor's text.
std::string source_instant_text(SourceMicros micros);

// A transaction's start time is stamped a moment before the transaction
// shows in pg_stat_activity, so a transaction starting just as the horizon
// is read could be missed. hi stays this far below the clock.
constexpr SourceMicros kStartReportMargin = 1'000'000;

struct HorizonDecision {
  // Time cursors: the instant hi stands for, still to be expressed in the
  // cursor's type (a timestamp or date in the source's time zone).
  std::optional<SourceMicros> instant;
  // Integer cursors: hi itself (the type's maximum stands for "no end").
  std::optional<CursorValue> value;
  // A prepared transaction of unknown start is open: hi is the stored
  // watermark, so nothing new is claimed until it ends.
  bool hold_at_watermark = false;
  // Source clock minus the moment hi stands for, in seconds.
  double lag_seconds = 0;
  // What held hi back, for status and the log; empty when nothing did.
  std::string held_by;
  // Integer cursors: samples older than this are no longer needed, and the
  // current observation to keep for later runs (nothing when none).
  std::optional<SourceMicros> forget_samples_before;
  std::optional<CursorSample> keep_sample;
};

struct HorizonInput {
  CursorType type = CursorType::TimestampTz;
  HorizonReading reading;
  // Integer cursors: observations of earlier runs, any order.
  std::vector<CursorSample> samples;
  // lookback of the table, in the cursor's units; zero refuses a horizon
  // that cannot see every writer.
  bool has_lookback = false;
  // Whether the table may take one: a refusal names a lookback as a way
  // out only then (an append table's rows would be inserted twice).
  bool takes_lookback = true;
  std::string source_name;  // for messages
  // The logical replication subscription that writes the table, when one
  // does: its rows carry values stamped on the publisher, whose open
  // transactions this database cannot see. Empty when none. A fact of the
  // table's catalog (SourceTable::subscription), not of the reading, which
  // is the source's and may serve other tables.
  std::string subscription;
};

// Decides hi. Fails, with a message saying why and what to change, when
// the horizon is unknowable and the table has no lookback to cover it: a
// role that cannot see other sessions, a session that does not report its
// activity, a standby without its primary, a table that logical
// replication writes, or ids from a sequence with CACHE above 1.
Result<HorizonDecision> decide_horizon(const HorizonInput& input);

// Where a run's windows end, from the horizon decided and where the run
// starts (its stored watermark, else `initial`).
struct HiInput {
  CursorType type = CursorType::TimestampTz;
  HorizonReading reading;
  HorizonDecision decision;
  std::optional<CursorValue> watermark;
  std::optional<CursorValue> initial;
  // Fraction digits the cursor column stores (timestamptz(3): 3); 6 when
  // it keeps microseconds.
  int cursor_fraction_digits = 6;
  // An instant on the source's clock in a time cursor's type (a timestamp
  // or date in the source session's time zone); unused for timestamptz
  // and integer cursors.
  std::function<Result<CursorValue>(SourceMicros)> in_cursor_type;
};

struct HiChoice {
  // Nothing when there is no hi yet (an empty integer table).
  std::optional<CursorValue> hi;
  double lag_seconds = 0;
  std::string held_by;
  // The stored watermark is above what the source has reached at all: it
  // is reported, never moved.
  bool watermark_ahead = false;
};

// Decides hi: the decision in the cursor's type and floored to the
// column's precision (a transaction that began at hi stamps a value the
// column may round below it), the stored watermark while a prepared
// transaction holds, and what a start above hi means: held (it waits), an
// initial ahead of the source (refused), or a watermark ahead (reported).
Result<HiChoice> choose_hi(const HiInput& input);

// How far a time watermark may be ahead of the state database's clock
// before status and the stale gauge call it ahead on their own (the source
// and state databases' clocks differ a little); a run compares it with the
// source's horizon exactly.
constexpr double kAheadToleranceSeconds = 60;

// How many samples a table keeps at most: a long-open transaction makes
// them pile up, and an older sample only lowers hi, which is safe.
constexpr std::size_t kMaxCursorSamples = 1000;

}  // namespace tidemark
