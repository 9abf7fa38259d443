// The time types core/ speaks: instants are UTC seconds (date::sys_seconds),
// wall-clock times in a zone are date::local_seconds.
#pragma once

#include <date/date.h>
#include <date/tz.h>

namespace tidemark {

using Instant = date::sys_seconds;
using LocalTime = date::local_seconds;
using TimeZone = date::time_zone;

}  // namespace tidemark
