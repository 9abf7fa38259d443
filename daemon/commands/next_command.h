// `tidemark next "CRON" [--tz ZONE] [--from ISO8601] [--count N]`: prints
// the next firings as UTC ISO-8601, one per line.
#pragma once

#include <iosfwd>
#include <string>

#include "core/time/time_types.h"
#include "daemon/commands/common_options.h"

namespace tidemark {

struct NextOptions : CommonOptions {
  std::string cron;
  std::string tz = "UTC";
  std::string from;  // empty: now
  int count = 5;
};

// `now` is used when --from is absent. Exit 2 on a bad expression, zone or time.
int run_next(const NextOptions& command_line, Instant now, std::ostream& out, std::ostream& err);

}  // namespace tidemark
