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

}  // namespace tidemark
