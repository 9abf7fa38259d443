#include "core/run/run_lifecycle.h"

#include <chrono>
#include <cstdlib>

namespace tidemark {
namespace {

// A partition's window as timestamptz cursor values, for run rows.
Window cursor_window(const TimeWindow& partition) {
  const auto micros = [](Instant t) {
    return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
  };
  return Window{CursorValue{CursorType::TimestampTz, micros(partition.lo)},
                CursorValue{CursorType::TimestampTz, micros(partition.hi)}};
}

// Records a failed or refused lock in `summary`; true when the lock is
// held and the run goes on. `what` names the lock ("table", "partition").
bool lock_taken(const Result<bool>& locked, const char* what, RunSummary& summary) {
  if (!locked) {
    summary.status = RunStatus::Failed;
    summary.error = std::string("cannot take the ") + what + "'s lock: " + locked.error();
    summary.error_kind = locked.error_kind();
    return false;
  }
  if (!*locked) summary.status = RunStatus::SkippedLocked;
  return *locked;
}

// Sets the summary's status and error from how the run's work ended.
void conclude(RunSummary& summary, const Status& outcome, bool cancelled) {
  if (outcome) {
    summary.status = RunStatus::Success;
    return;
  }
  summary.status = cancelled ? RunStatus::Cancelled : RunStatus::Failed;
  summary.error = outcome.error();
  summary.error_kind = outcome.error_kind();
}

}  // namespace

RunEnd run_end(const RunSummary& summary) {
  RunEnd end;
  end.success = summary.status == RunStatus::Success;
  end.window = summary.range;
  end.watermark_after = summary.watermark_after;
  end.rows_read = summary.rows_read;
  end.rows_written = summary.rows_written;
  end.error = summary.error;
  end.error_kind = failure_kind(summary);
  end.horizon = summary.horizon;
  end.reconcile = summary.reconcile;
  end.changes = summary.changes;
  end.rewrite_reason = summary.rewrite_reason;
  if (summary.schema_drift) end.schema_drift = *summary.schema_drift ? summary.schema_changes : std::string();
  return end;
}

RunLifecycle::RunLifecycle(StateStore& state, const TableOwnership& ownership, RunObserver& observer, RunLock lock,
                           RunTrigger trigger, RunRow row)
    : state_(state),
      ownership_(ownership),
      observer_(observer),
      lock_(state, std::move(lock)),
      trigger_(trigger),
      row_(row) {
  summary_.table = lock_.lock().table;
  if (lock_.lock().partition) {
    summary_.partitions = true;
    summary_.range = cursor_window(*lock_.lock().partition);
  }
}

RunLifecycle::~RunLifecycle() {
  if (!finished_) finish(Error{"the run ended without recording how"}, /*cancelled=*/false);
}

bool RunLifecycle::open(bool wait) {
  if (opened_ || finished_) std::abort();  // one run, opened once
  const char* what = lock_.lock().partition ? "partition" : "table";
  if (!lock_taken(lock_.acquire(wait), what, summary_)) return false;
  if (!lock_.lock().partition && !ownership_.owns(summary_.table)) {
    // As if another member's run held it: that member runs the table now.
    lock_.release();
    summary_.status = RunStatus::SkippedLocked;
    return false;
  }
  if (row_ == RunRow::None) {
    opened_ = true;
    return true;
  }
  const std::optional<Window> window =
      lock_.lock().partition ? summary_.range : std::optional<Window>();
  const auto opened = state_.open_run(RunStart{summary_.table, trigger_, window});
  if (!opened) {
    summary_.status = RunStatus::Failed;
    summary_.error = opened.error();
    summary_.error_kind = opened.error_kind();
    return false;
  }
  summary_.run = opened->run;
  opened_ = true;
  if (!opened->unreadable_watermark.empty()) {
    failed_open_ = permanent_error(opened->unreadable_watermark);
    return false;
  }
  if (opened->watermark) {
    summary_.watermark_before = opened->watermark->value;
    watermark_is_snapshot_ = opened->watermark->snapshot;
  }
  loaded_columns_ = opened->loaded_columns;
  snapshot_horizon_ = opened->snapshot_horizon;
  summary_.watermark_after = summary_.watermark_before;  // until a step commits
  return true;
}

const RunSummary& RunLifecycle::finish(const Status& outcome, bool cancelled) {
  if (finished_) std::abort();  // a run row is closed once
  finished_ = true;
  if (opened_) {
    if (failed_open_) {
      conclude(summary_, *failed_open_, /*cancelled=*/false);
    } else {
      conclude(summary_, outcome, cancelled);
    }
  }
  if (opened_ && row_ == RunRow::Kept) {
    if (summary_.status != RunStatus::Success && lock_.lock().partition) {
      // Best effort: the run row below says it failed either way.
      state_.mark_partition_failed(summary_.table, *lock_.lock().partition, summary_.run);
    }
    if (const Status recorded = state_.finish_run(summary_.run, run_end(summary_)); !recorded && summary_.status == RunStatus::Success) {
      // The rows and the watermark are committed; only the run row is stale.
      summary_.error = "the run succeeded but its run row could not be updated: " + recorded.error();
    }
  }
  lock_.release();
  observer_.on_run_finished(summary_);
  return summary_;
}

}  // namespace tidemark
