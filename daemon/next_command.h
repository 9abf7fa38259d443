// `tidemark next "CRON" [--tz ZONE] [--from ISO8601] [--count N]`: prints
// the next firings as UTC ISO-8601, one per line.
#pragma once

#include <iosfwd>

#include "core/time_types.h"
#include "daemon/command_line.h"

namespace tidemark {

// `now` is used when --from is absent. Exit 2 on a bad expression, zone or time.
int run_next(const CommandLine& command_line, Instant now, std::ostream& out, std::ostream& err);

}  // namespace tidemark
