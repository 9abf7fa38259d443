#include "core/run/run_observer.h"

namespace tidemark {

std::string_view run_status_name(RunStatus status) {
  switch (status) {
    case RunStatus::Success: return "success";
    case RunStatus::Failed: return "failed";
    case RunStatus::SkippedLocked: return "skipped";
    case RunStatus::Cancelled: return "cancelled";
  }
  return "?";
}

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

void conclude(RunSummary& summary, const Status& outcome, bool cancelled) {
  if (outcome) {
    summary.status = RunStatus::Success;
    return;
  }
  summary.status = cancelled ? RunStatus::Cancelled : RunStatus::Failed;
  summary.error = outcome.error();
  summary.error_kind = outcome.error_kind();
}

RunEnd run_end(const RunSummary& summary) {
  RunEnd end;
  end.success = summary.status == RunStatus::Success;
  end.window = summary.range;
  end.watermark_after = summary.watermark_after;
  end.rows_read = summary.rows_read;
  end.rows_written = summary.rows_written;
  end.error = summary.error;
  // A cancelled run was stopped by a shutdown: another would have gone on.
  end.error_kind = summary.status == RunStatus::Failed ? summary.error_kind : ErrorKind::Transient;
  end.horizon = summary.horizon;
  end.reconcile = summary.reconcile;
  if (summary.schema_drift) end.schema_drift = *summary.schema_drift ? summary.schema_changes : std::string();
  return end;
}

}  // namespace tidemark
