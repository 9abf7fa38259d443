#include "core/run/run_ports.h"

namespace tidemark {

std::string_view run_trigger_name(RunTrigger trigger) {
  switch (trigger) {
    case RunTrigger::Schedule: return "schedule";
    case RunTrigger::Manual: return "manual";
    case RunTrigger::Startup: return "startup";
    case RunTrigger::Backfill: return "backfill";
    case RunTrigger::Retry: return "retry";
  }
  return "?";
}

}  // namespace tidemark
