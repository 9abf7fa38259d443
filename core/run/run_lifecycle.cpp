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

}  // namespace

RunLifecycle::RunLifecycle(StateStore& state, RunObserver& observer, RunLock lock, RunTrigger trigger)
    : state_(state), observer_(observer), lock_(state, std::move(lock)), trigger_(trigger) {
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
  if (opened->watermark) summary_.watermark_before = opened->watermark->value;
  loaded_columns_ = opened->loaded_columns;
  summary_.watermark_after = summary_.watermark_before;  // until a step commits
  opened_ = true;
  return true;
}

const RunSummary& RunLifecycle::finish(const Status& outcome, bool cancelled) {
  if (finished_) std::abort();  // a run row is closed once
  finished_ = true;
  if (opened_) {
    conclude(summary_, outcome, cancelled);
    if (summary_.status != RunStatus::Success && lock_.lock().partition) {
      // Best effort: the run row below says it failed either way.
      state_.mark_partition_failed(summary_.table, *lock_.lock().partition, summary_.run);
    }
    if (const Status recorded = state_.finish_run(summary_.run, run_end(summary_)); !recorded && outcome) {
      // The rows and the watermark are committed; only the run row is stale.
      summary_.error = "the run succeeded but its run row could not be updated: " + recorded.error();
    }
  }
  lock_.release();
  observer_.on_run_finished(summary_);
  return summary_;
}

}  // namespace tidemark
