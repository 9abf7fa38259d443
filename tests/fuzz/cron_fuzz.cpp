// libFuzzer target for the cron parser and next-firing search: any input
// either fails to parse or yields firings that strictly increase, in zones
// with daylight saving and odd offsets, and never hangs.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/time/cron_schedule.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto schedule = tidemark::CronSchedule::parse(text);
  if (!schedule) return 0;
  static const tidemark::TimeZone* const zones[] = {
      date::locate_zone("UTC"), date::locate_zone("Europe/Berlin"), date::locate_zone("Australia/Lord_Howe")};
  // 2026-03-28T00:00:00Z: just before Berlin's spring-forward change.
  const tidemark::Instant start{std::chrono::seconds(1774656000)};
  for (const tidemark::TimeZone* zone : zones) {
    tidemark::Instant t = start;
    for (int i = 0; i < 4; ++i) {
      const auto next = schedule->next_after(t, *zone);
      if (!next) std::abort();  // a parsed schedule always fires within the horizon
      if (*next <= t) std::abort();
      t = *next;
    }
  }
  return 0;
}
