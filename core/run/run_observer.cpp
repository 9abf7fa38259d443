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

ErrorKind failure_kind(const RunSummary& summary) {
  return summary.status == RunStatus::Cancelled ? ErrorKind::Transient : summary.error_kind;
}

}  // namespace tidemark
