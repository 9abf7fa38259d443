#include "core/watermark/safe_horizon.h"

#include <algorithm>
#include <limits>

namespace tidemark {
namespace {

std::string describe_transaction(const OpenTransaction& t) {
  if (t.prepared) {
    return "prepared transaction \"" + t.application_name + "\" (prepared at " + source_instant_text(t.started) + ")";
  }
  std::string out = "pid " + std::to_string(t.pid);
  out += " (" + (t.application_name.empty() ? std::string("no application_name") : t.application_name);
  out += ", " + (t.state.empty() ? std::string("state unknown") : t.state) + ")";
  return out + ", in a transaction since " + source_instant_text(t.started);
}

double seconds_between(SourceMicros from, SourceMicros to) { return static_cast<double>(to - from) / 1e6; }

// The refusals that apply to every cursor type: a horizon that cannot see
// every writer is only safe with a lookback to cover what it misses.
std::optional<std::string> unknowable(const HorizonInput& input) {
  if (input.has_lookback) return std::nullopt;
  const HorizonReading& r = input.reading;
  // The way out through a lookback, where the table may take one.
  const auto or_lookback = [&](const std::string& how_long) {
    return input.takes_lookback ? ", or set a lookback " + how_long
                                : " (this table's mode takes no lookback, which would load rows twice)";
  };
  if (!r.sees_all_sessions) {
    return "source " + input.source_name +
                 ": this role cannot see other sessions' transactions, so rows still in flight cannot be held "
                 "back and the run is refused with lookback 0s; grant the role pg_monitor (or "
                 "pg_read_all_stats) with inheritance (a NOINHERIT role has its privileges only after SET ROLE)" +
           or_lookback("longer than the longest write transaction");
  }
  if (!r.unreported_session.empty()) {
    return "source " + input.source_name + ": " + r.unreported_session +
           " has track_activities off, so whether it has a transaction open, and since when, cannot be seen; the "
           "run is refused with lookback 0s; turn track_activities back on for it (ALTER ROLE ... RESET "
           "track_activities)" + or_lookback("longer than the longest write transaction");
  }
  if (r.standby_without_primary) {
    return "source " + input.source_name +
                 " is a hot standby, which cannot see the primary's open transactions, so the run is refused "
                 "with lookback 0s; give the connection a primary: (a connection to the primary)" +
           or_lookback("longer than the longest write transaction plus the replication lag");
  }
  if (input.type == CursorType::Integer && r.sequence_cache > 1) {
    const std::string cache = std::to_string(r.sequence_cache);
    return "source " + input.source_name + ": the cursor takes its ids from a sequence with CACHE " + cache +
           ", which hands each session a block of " + cache +
           " ids, so a session can commit an id below ids committed long before, and no observation shows it; "
           "the run is refused with lookback 0s; set the sequence's CACHE to 1 (ALTER SEQUENCE ... CACHE 1)" +
           or_lookback("(in ids) larger than " + cache + " times the number of sessions that insert");
  }
  if (!input.subscription.empty()) {
    return "source " + input.source_name + ": the table is written by logical replication (subscription " +
           input.subscription +
           "), whose rows carry values stamped on the publisher, where transactions still open cannot be seen "
           "from here, so the run is refused with lookback 0s; read the table on the publisher" +
           or_lookback("longer than the publisher's longest write transaction plus the replication lag");
  }
  return std::nullopt;
}

HorizonDecision time_horizon(const HorizonReading& r) {
  HorizonDecision d;
  SourceMicros hi = r.clock - kStartReportMargin;
  if (r.replayed_until && *r.replayed_until < hi) {
    hi = *r.replayed_until;
    d.held_by = "the standby, which has replayed the primary's commits only up to " + source_instant_text(hi);
  }
  if (r.oldest && r.oldest->prepared) {
    d.hold_at_watermark = true;
    d.held_by = describe_transaction(*r.oldest) + ": its start is unknown, so the watermark waits until it ends";
    d.lag_seconds = seconds_between(r.oldest->started, r.clock);
    return d;
  }
  if (r.oldest && r.oldest->started < hi) {
    hi = r.oldest->started;
    d.held_by = describe_transaction(*r.oldest);
  }
  d.instant = hi;
  d.lag_seconds = seconds_between(hi, r.clock);
  return d;
}

// max + 1, where the type's maximum stands for "no end": no bigint lies
// beyond it, so a window up to it reads every row (load_statements).
CursorValue after(std::int64_t max) {
  const std::int64_t next = max == std::numeric_limits<std::int64_t>::max() ? max : max + 1;
  return CursorValue{CursorType::Integer, next};
}

HorizonDecision integer_horizon(const HorizonReading& r, const std::vector<CursorSample>& stored) {
  HorizonDecision d;
  std::optional<CursorSample> current;
  if (r.max_cursor) current = CursorSample{r.clock, *r.max_cursor};

  // Every id handed out after a sample was taken is larger than its max,
  // and every transaction still open began after the chosen sample, so
  // none of them can hold an id below the chosen max + 1.
  if (r.oldest && r.oldest->prepared) {
    d.hold_at_watermark = true;
    d.held_by = describe_transaction(*r.oldest) + ": its start is unknown, so the watermark waits until it ends";
    d.lag_seconds = seconds_between(r.oldest->started, r.clock);
    d.keep_sample = current;
    return d;
  }
  if (!r.oldest) {
    if (current) d.value = after(current->max);
    d.keep_sample = current;
    d.forget_samples_before = r.clock;
    return d;
  }
  std::optional<CursorSample> chosen;
  std::size_t kept = 0;
  for (const CursorSample& s : stored) {
    // A sample from the future (the source clock went back) proves nothing.
    if (s.taken_at > r.clock || s.taken_at >= r.oldest->started) continue;
    if (!chosen || s.taken_at > chosen->taken_at) chosen = s;
  }
  for (const CursorSample& s : stored) {
    if (s.taken_at <= r.clock && (!chosen || s.taken_at >= chosen->taken_at)) ++kept;
  }
  if (current && current->taken_at < r.oldest->started) chosen = current;
  d.held_by = describe_transaction(*r.oldest);
  if (chosen) {
    d.value = after(chosen->max);
    d.lag_seconds = seconds_between(chosen->taken_at, r.clock);
    d.forget_samples_before = chosen->taken_at;
  } else {
    // No observation older than the transaction yet: nothing new is safe.
    d.held_by += "; no earlier observation of the largest id exists yet";
    d.lag_seconds = seconds_between(r.oldest->started, r.clock);
  }
  if (current && kept < kMaxCursorSamples) d.keep_sample = current;
  return d;
}

// What the source has reached with nothing held back: its clock less the
// margin, its largest id (in the table or handed out by its sequence) + 1;
// nothing for an empty integer table without a readable sequence.
Result<std::optional<CursorValue>> unheld(const HiInput& input) {
  const HorizonReading& r = input.reading;
  if (input.type == CursorType::Integer) {
    std::optional<std::int64_t> largest = r.max_cursor;
    if (r.sequence_last && (!largest || *r.sequence_last > *largest)) largest = r.sequence_last;
    if (!largest) return std::optional<CursorValue>();
    return std::optional<CursorValue>(after(*largest));
  }
  const SourceMicros at = r.clock - kStartReportMargin;
  if (input.type == CursorType::TimestampTz) return std::optional<CursorValue>(CursorValue{input.type, at});
  const auto local = input.in_cursor_type(at);
  if (!local) return local.failure();
  return std::optional<CursorValue>(*local);
}

}  // namespace

std::string source_instant_text(SourceMicros micros) {
  return cursor_to_text(CursorValue{CursorType::TimestampTz, micros});
}

Result<HorizonDecision> decide_horizon(const HorizonInput& input) {
  if (auto why = unknowable(input)) return permanent_error(*why);
  HorizonDecision d = input.type == CursorType::Integer ? integer_horizon(input.reading, input.samples)
                                                        : time_horizon(input.reading);
  // With a lookback the run goes on, but status says what it cannot see.
  if (d.held_by.empty() && !input.reading.sees_all_sessions) {
    d.held_by = "the clock only: this role cannot see other sessions' transactions (grant it pg_monitor), so rows "
                "committed late rely on the lookback";
  } else if (d.held_by.empty() && !input.reading.unreported_session.empty()) {
    d.held_by = "the clock only for " + input.reading.unreported_session +
                ", which has track_activities off: rows it commits late rely on the lookback";
  } else if (d.held_by.empty() && input.type == CursorType::Integer && input.reading.sequence_cache > 1) {
    d.held_by = "the largest id only: ids come from a sequence with CACHE " +
                std::to_string(input.reading.sequence_cache) +
                ", so ids a session holds and commits late rely on the lookback";
  } else if (d.held_by.empty() && !input.subscription.empty()) {
    d.held_by = "this database's clock only: the table is written by logical replication (subscription " +
                input.subscription + "), so rows stamped on the publisher and replicated late rely on "
                "the lookback";
  } else if (d.held_by.empty() && input.reading.standby_without_primary) {
    d.held_by = "the standby's clock only: without a primary: connection the primary's open transactions are not "
                "visible, so rows committed late rely on the lookback";
  }
  return d;
}

Result<HiChoice> choose_hi(const HiInput& input) {
  const HorizonDecision& decision = input.decision;
  HiChoice out;
  out.lag_seconds = decision.lag_seconds;
  out.held_by = decision.held_by;
  const std::optional<CursorValue>& start = input.watermark ? input.watermark : input.initial;
  if (decision.hold_at_watermark) {
    out.hi = start;
    // hi is the stored watermark: what is held back is everything after it.
    if (start) {
      if (const auto at = cursor_unix_seconds(*start)) {
        out.lag_seconds = static_cast<double>(input.reading.clock) / 1e6 - *at;
      }
    }
  } else if (decision.value) {
    out.hi = decision.value;
  } else if (decision.instant) {
    if (input.type == CursorType::TimestampTz) {
      out.hi = CursorValue{input.type, *decision.instant};
    } else {
      const auto local = input.in_cursor_type(*decision.instant);
      if (!local) return local.failure();
      out.hi = *local;
    }
    out.hi = cursor_floor(*out.hi, input.cursor_fraction_digits);
  }
  if (!out.hi || !start || !(*out.hi < *start)) return out;

  // Below the start: either a transaction open since before it holds hi
  // there (the start is fine; it waits), or the start is ahead of what the
  // source has reached at all (its clock, its largest id).
  const auto reached = unheld(input);
  if (!reached) return reached.failure();
  // Held: nothing between hi and the start moves. (An initial stays the
  // user's claim: rows stamped below it, the holder's included, are not wanted.)
  if (*reached && !(**reached < *start)) return out;
  if (!input.watermark) {
    return permanent_error("initial " + cursor_to_text(*start) + " is ahead of the source's safe horizon " +
                           cursor_to_text(*out.hi) +
                           ": it would claim rows that do not exist yet; set an initial in the past (or none)");
  }
  // Runs never move a watermark that is ahead (a rewind or initial in the
  // future, a source clock that went back): it is reported, not accepted.
  out.watermark_ahead = true;
  out.held_by = "the stored watermark " + cursor_to_text(*start) + " is ahead of the source's safe horizon " +
                cursor_to_text(*out.hi) +
                "; rows between are not claimed until the source passes it (tidemark rewind fixes a watermark set in "
                "the future)";
  if (input.type == CursorType::Timestamp) {
    // A wall clock read in another zone than the one that stored it.
    out.held_by +=
        "; a timestamp cursor's horizon is the source session's wall clock: if its time zone changed, rows stamped "
        "since in the new zone lie below the watermark and are not loaded: rewind the watermark to below them, then "
        "reconcile";
  }
  return out;
}

}  // namespace tidemark
