#include "daemon/commands/next_command.h"

#include <ostream>

#include "core/time/cron_schedule.h"
#include "core/time/instant_text.h"
#include "daemon/commands/exit_code.h"

namespace tidemark {

int run_next(const NextOptions& command_line, Instant now, std::ostream& out, std::ostream& err) {
  const auto schedule = CronSchedule::parse(command_line.cron);
  if (!schedule) {
    err << "tidemark next: " << schedule.error() << '\n';
    return kExitUsage;
  }
  const TimeZone* zone = nullptr;
  try {
    zone = date::locate_zone(command_line.tz);
  } catch (const std::exception&) {
    err << "tidemark next: unknown time zone \"" << command_line.tz << "\"\n";
    return kExitUsage;
  }
  Instant from = now;
  if (!command_line.from.empty()) {
    const auto parsed = parse_instant(command_line.from);
    if (!parsed) {
      err << "tidemark next: --from: " << parsed.error() << '\n';
      return kExitUsage;
    }
    from = *parsed;
  }
  // ISO-8601 years have four digits: firings past the end of 9999 are not
  // printed (they would read "10000-01-01...").
  const Instant last = date::sys_days{date::year{9999} / 12 / 31} + std::chrono::hours(24) - std::chrono::seconds(1);
  for (int i = 0; i < command_line.count; ++i) {
    const auto next = schedule->next_after(from, *zone);
    if (!next) break;
    if (*next > last) {
      err << "tidemark next: " << i << " of " << command_line.count
          << " firings printed: the next falls after the year 9999, past what ISO-8601 dates can write\n";
      break;
    }
    out << format_instant(*next) << '\n';
    from = *next;
  }
  return kExitOk;
}

}  // namespace tidemark
