#include "core/watermark/table_reason.h"

#include <cmath>

#include "core/time/duration.h"
#include "core/time/instant_text.h"

namespace tidemark {
namespace {

std::string age_text(double seconds) { return format_age(static_cast<std::int64_t>(std::floor(seconds))); }

TableReason failing(const TableRunFacts& runs) {
  TableReason out;
  out.reason = Reason::Failing;
  out.failures = runs.failures;
  out.failing_since = runs.failing_since;
  out.error_kind = runs.last_error_kind;
  out.error_line = first_line(runs.last_error);
  out.text = "failing";
  if (runs.failing_since) out.text += " since " + format_unix_seconds(*runs.failing_since);
  out.text += " (" + std::to_string(runs.failures) + (runs.failures == 1 ? " run" : " runs");
  if (runs.last_error_kind) {
    out.text += runs.last_error_kind == ErrorKind::Permanent ? "; permanent" : "; transient";
  }
  if (!out.error_line.empty()) out.text += ": " + out.error_line;
  out.text += ")";
  return out;
}

// Drift stops every run until someone changes the source, the target or
// the configuration: what changed comes first, how long it has lasted after.
TableReason drifted(const TableRunFacts& runs) {
  TableReason out;
  out.reason = Reason::SchemaDrift;
  out.changes = runs.schema_drift;
  out.failures = runs.failures;
  out.failing_since = runs.failing_since;
  out.text = "schema drift: " + runs.schema_drift + " (";
  if (runs.failing_since) out.text += "since " + format_unix_seconds(*runs.failing_since) + ", ";
  out.text += std::to_string(runs.failures) + (runs.failures == 1 ? " run" : " runs") + " stopped)";
  return out;
}

TableReason ahead(const WatermarkHealth& health, const TableRunFacts& runs) {
  TableReason out;
  out.reason = Reason::Ahead;
  if (health.why == Staleness::AheadOfSource) {
    out.held_by = runs.horizon_held_by;
    out.text = "ahead of the source: " + (runs.horizon_held_by.empty()
                                              ? std::string("the last run found the watermark above the source's "
                                                            "safe horizon; rewind it to a value the source has passed")
                                              : runs.horizon_held_by);
  } else {
    // Only a time watermark is ahead of a clock, and it has an age.
    out.text = "ahead of the source: the watermark is " + age_text(-health.age_seconds.value_or(0)) +
               " past the state database's clock; rewind it to a value the source has passed";
  }
  return out;
}

// Stale with no holder to blame: say what the runs did meanwhile.
TableReason stale(const WatermarkReading& reading, const WatermarkHealth& health, const TableRunFacts& runs,
                  double now_unix, std::chrono::seconds stale_after) {
  TableReason out;
  out.reason = Reason::Stale;
  const std::string limit = " (stale_after " + format_duration(stale_after) + ")";
  const std::string age = age_text(health.age_seconds.value_or(0));
  const std::string watermark =
      reading.watermark_unix ? "the watermark is " + age + " old" : "the watermark has not moved for " + age;
  if (!runs.last_success_at) {
    out.text = "stale: " + watermark + limit + " and no run has succeeded";
    return out;
  }
  const double since_success = now_unix - *runs.last_success_at;
  if (since_success > static_cast<double>(stale_after.count())) {
    out.text = "stale: no run has succeeded for " + age_text(since_success) + limit;
    return out;
  }
  out.text = "stale: " + watermark + limit + "; the last run succeeded " + age_text(since_success) + " ago";
  // An integer watermark is max(id) + 1: standing still, the source has
  // written no row above it.
  if (!reading.watermark_unix) out.text += " and found no new rows";
  return out;
}

}  // namespace

TableReason explain_table(const WatermarkReading& reading, const TableRunFacts& runs, double now_unix,
                          std::chrono::seconds stale_after) {
  const WatermarkHealth health = assess_watermark(reading, now_unix, stale_after);
  if (runs.last_failed && !runs.schema_drift.empty()) return drifted(runs);
  if (runs.last_failed) return failing(runs);
  if (health.ahead()) return ahead(health, runs);
  if (!runs.any_run) {
    TableReason out;
    out.reason = Reason::NeverRan;
    out.text = "never ran";
    return out;
  }
  if (health.why != Staleness::TooOld) {
    if (runs.reconcile_failed) {
      // The loads are fine, but rows deleted in the source stay in the
      // target (and missing rows are not looked for) until one succeeds.
      TableReason out;
      out.reason = Reason::ReconcileFailing;
      out.error_line = first_line(runs.reconcile_error);
      out.text = "reconcile failing";
      if (runs.reconcile_failed_at) out.text += " (" + format_unix_seconds(*runs.reconcile_failed_at) + ")";
      if (!out.error_line.empty()) out.text += ": " + out.error_line;
      return out;
    }
    if (runs.reconcile_missing && *runs.reconcile_missing > 0) {
      // The watermark's claim was broken, though the rows are back: the
      // cause (a writer behind the cursor, a delete on the target) may
      // still be at work. Until the next reconcile finds none.
      TableReason out;
      out.reason = Reason::RowsMissing;
      out.text = "rows missing: the last reconcile";
      if (runs.reconcile_at) out.text += " (" + format_unix_seconds(*runs.reconcile_at) + ")";
      out.text += " found " + std::to_string(*runs.reconcile_missing) +
                  " source rows below the watermark that the target lacked, and copied them again";
      return out;
    }
    if (runs.unseen_changes && *runs.unseen_changes > 0) {
      // The target may hold old values and deleted rows, and no run can
      // tell which: only a change of configuration ends it.
      TableReason out;
      out.reason = Reason::UnseenChanges;
      out.unseen_changes = *runs.unseen_changes;
      out.text = "unseen changes: the source counted " + std::to_string(*runs.unseen_changes) +
                 " updates and deletes that the cursor cannot see (an identity, a sequence or an append table's "
                 "cursor follows new rows only); use mode: snapshot, a cursor stamped on every change, or "
                 "deletes.reconcile, which copies changed rows again (tidemark reconcile does it once; an append "
                 "table has none: see the TidemarkUnseenChanges runbook)";
      return out;
    }
    if (runs.input_wait_seconds) {
      // A day complete by the source's clock, not yet loaded into an input:
      // it is written once the input has passed its end.
      TableReason out;
      out.reason = Reason::Waiting;
      out.held_by = runs.horizon_held_by;
      out.waited_seconds = *runs.input_wait_seconds;
      out.text = runs.horizon_held_by.empty() ? std::string("waiting for an input") : runs.horizon_held_by;
      out.text += *runs.input_wait_seconds > 0
                      ? " (a complete partition waits, for " + age_text(*runs.input_wait_seconds) + ")"
                      : " (a complete partition waits)";
      return out;
    }
    return TableReason{};
  }
  // The hold is to blame when it is the larger part of the age: hi stayed
  // that far behind the source's clock at the last success, and less time
  // than that has passed since.
  if (!runs.horizon_held_by.empty() && runs.horizon_lag_seconds && runs.last_success_at &&
      *runs.horizon_lag_seconds > now_unix - *runs.last_success_at) {
    TableReason out;
    out.reason = Reason::HeldBack;
    out.held_by = runs.horizon_held_by;
    out.text = held_back_text(runs.horizon_held_by);
    return out;
  }
  return stale(reading, health, runs, now_unix, stale_after);
}

const char* reason_name(Reason reason) {
  switch (reason) {
    case Reason::None: return "";
    case Reason::SchemaDrift: return "schema_drift";
    case Reason::Failing: return "failing";
    case Reason::Ahead: return "ahead";
    case Reason::NeverRan: return "never_ran";
    case Reason::HeldBack: return "held_back";
    case Reason::Stale: return "stale";
    case Reason::ReconcileFailing: return "reconcile_failing";
    case Reason::RowsMissing: return "rows_missing";
    case Reason::UnseenChanges: return "unseen_changes";
    case Reason::Waiting: return "waiting";
  }
  return "";
}

std::string held_back_text(const std::string& held_by) {
  return held_by.rfind("waiting for ", 0) == 0 ? held_by : "held back by " + held_by;
}

std::string first_line(const std::string& text) {
  const std::size_t end = text.find_first_of("\r\n");
  return end == std::string::npos ? text : text.substr(0, end);
}

}  // namespace tidemark
