#include "core/time/cron_schedule.h"

#include <array>
#include <cctype>
#include <charconv>
#include <vector>

#include "core/text/plain_text.h"

namespace tidemark {
namespace {

using namespace std::chrono_literals;

struct FieldSpec {
  const char* name;
  int min;
  int max;
  std::vector<std::string_view> names;  // names[i] stands for min + i
};

const FieldSpec kSecond{"second", 0, 59, {}};
const FieldSpec kMinute{"minute", 0, 59, {}};
const FieldSpec kHour{"hour", 0, 23, {}};
const FieldSpec kDayOfMonth{"day-of-month", 1, 31, {}};
const FieldSpec kMonth{"month", 1, 12, {"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}};
const FieldSpec kDayOfWeek{"day-of-week", 0, 7, {"sun", "mon", "tue", "wed", "thu", "fri", "sat"}};

// The horizon of every search: the Gregorian calendar repeats every 400
// years (146,097 days), so an expression with no firing in that span has
// none at all, and one that has a firing has the next one within it (29
// February on a Sunday comes 40 years apart, 2088 to 2128).
constexpr date::days kHorizon{146097 + 366};

Error field_error(const FieldSpec& f, std::string_view field, const std::string& why) {
  std::string allowed = std::to_string(f.min) + "-" + std::to_string(f.max);
  if (!f.names.empty()) allowed += " or " + std::string(f.names.front()) + "-" + std::string(f.names.back());
  return Error{std::string(f.name) + " field \"" + std::string(field) + "\": " + why + " (allowed: *, " + allowed +
               ", ranges a-b, steps */n or a-b/n, lists a,b)"};
}

// Parses a number or a name of field f.
Result<int> parse_value(const FieldSpec& f, std::string_view field, std::string_view token) {
  if (token.empty()) return field_error(f, field, "empty value");
  if (std::isalpha(static_cast<unsigned char>(token.front()))) {
    const std::string name = ascii_lower(token);
    for (std::size_t i = 0; i < f.names.size(); ++i) {
      if (f.names[i] == name) return f.min + static_cast<int>(i);
    }
    return field_error(f, field, "unknown name \"" + std::string(token) + "\"");
  }
  int value = 0;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (ec != std::errc() || end != token.data() + token.size()) {
    return field_error(f, field, "\"" + std::string(token) + "\" is not a number");
  }
  if (value < f.min || value > f.max) {
    return field_error(f, field, std::to_string(value) + " is out of range");
  }
  return value;
}

// Parses one field into the set of values it selects (bit v for value v).
Result<std::bitset<64>> parse_field(const FieldSpec& f, std::string_view field) {
  std::bitset<64> bits;
  if (field.empty()) return field_error(f, field, "empty field");
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = field.find(',', start);
    const std::string_view item = field.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (item.empty()) return field_error(f, field, "empty list item");

    const std::size_t slash = item.find('/');
    const std::string_view range = item.substr(0, slash);
    int lo = f.min, hi = f.max, step = 1;
    if (range == "*") {
      // whole range
    } else {
      const std::size_t dash = range.find('-');
      auto first = parse_value(f, field, range.substr(0, dash));
      if (!first) return first.failure();
      lo = hi = *first;
      if (dash != std::string_view::npos) {
        auto last = parse_value(f, field, range.substr(dash + 1));
        if (!last) return last.failure();
        hi = *last;
        if (hi < lo) return field_error(f, field, "range " + std::string(range) + " runs backwards");
      } else if (slash != std::string_view::npos) {
        return field_error(f, field, "a step needs * or a range before it, as in " + std::to_string(lo) + "-" +
                                         std::to_string(f.max) + "/n");
      }
    }
    if (slash != std::string_view::npos) {
      const std::string_view step_text = item.substr(slash + 1);
      const auto [end, ec] = std::from_chars(step_text.data(), step_text.data() + step_text.size(), step);
      if (step_text.empty() || ec != std::errc() || end != step_text.data() + step_text.size() || step < 1 ||
          step > f.max - f.min + 1) {
        return field_error(f, field, "step \"" + std::string(step_text) + "\" must be a number from 1 to " +
                                         std::to_string(f.max - f.min + 1));
      }
    }
    for (int v = lo; v <= hi; v += step) bits.set(static_cast<std::size_t>(v));

    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return bits;
}

template <std::size_t N>
std::bitset<N> narrow(const std::bitset<64>& bits) {
  std::bitset<N> out;
  for (std::size_t i = 0; i < N; ++i) out[i] = bits[i];
  return out;
}

// The first set bit at or after `from`, or -1.
template <std::size_t N>
int next_set(const std::bitset<N>& bits, unsigned from) {
  for (std::size_t i = from; i < N; ++i) {
    if (bits[i]) return static_cast<int>(i);
  }
  return -1;
}

std::string_view expand_macro(std::string_view expression) {
  static const std::array<std::pair<std::string_view, std::string_view>, 7> kMacros{{
      {"@yearly", "0 0 1 1 *"},
      {"@annually", "0 0 1 1 *"},
      {"@monthly", "0 0 1 * *"},
      {"@weekly", "0 0 * * 0"},
      {"@daily", "0 0 * * *"},
      {"@midnight", "0 0 * * *"},
      {"@hourly", "0 * * * *"},
  }};
  for (const auto& [name, fields] : kMacros) {
    if (expression == name) return fields;
  }
  return {};
}

}  // namespace

Result<CronSchedule> CronSchedule::parse(std::string_view expression) {
  std::string_view text = expression;
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  if (!text.empty() && text.front() == '@') {
    const std::string_view fields = expand_macro(ascii_lower(text));
    if (fields.empty()) {
      return Error{"unknown macro \"" + std::string(text) +
                   "\"; use @yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly"};
    }
    auto schedule = parse(fields);
    if (schedule) {
      CronSchedule out = std::move(schedule).value();
      out.expression_ = std::string(text);
      return out;
    }
    return schedule;
  }

  std::vector<std::string_view> fields;
  for (std::size_t i = 0; i < text.size();) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    const std::size_t start = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i > start) fields.push_back(text.substr(start, i - start));
  }
  if (fields.size() != 5 && fields.size() != 6) {
    return Error{"expected 5 fields (minute hour day-of-month month day-of-week), 6 with a leading seconds "
                 "field, or a macro such as @daily; got " +
                 std::to_string(fields.size()) + " in \"" + std::string(text) + "\""};
  }
  CronSchedule s;
  s.expression_ = std::string(text);
  std::size_t i = 0;
  if (fields.size() == 6) {
    auto seconds = parse_field(kSecond, fields[i++]);
    if (!seconds) return seconds.failure();
    s.seconds_ = narrow<60>(*seconds);
  } else {
    s.seconds_.set(0);
  }
  const FieldSpec* specs[] = {&kMinute, &kHour, &kDayOfMonth, &kMonth, &kDayOfWeek};
  std::bitset<64> parsed[5];
  for (int k = 0; k < 5; ++k) {
    auto bits = parse_field(*specs[k], fields[i + k]);
    if (!bits) return bits.failure();
    parsed[k] = *bits;
  }
  s.minutes_ = narrow<60>(parsed[0]);
  s.hours_ = narrow<24>(parsed[1]);
  s.days_of_month_ = narrow<32>(parsed[2]);
  s.months_ = narrow<13>(parsed[3]);
  if (parsed[4][7]) parsed[4].set(0);  // Sunday is 0 or 7
  s.days_of_week_ = narrow<7>(parsed[4]);
  s.dom_star_ = fields[i + 2].front() == '*';
  s.dow_star_ = fields[i + 4].front() == '*';

  // A day-of-month the selected months never have can never fire, unless a
  // restricted day-of-week supplies days of its own (Vixie's "either").
  if (!s.dom_star_ && s.dow_star_) {
    static constexpr int kDaysInMonth[13] = {0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool possible = false;
    for (int m = 1; m <= 12 && !possible; ++m) {
      for (int d = 1; d <= kDaysInMonth[m] && !possible; ++d) possible = s.months_[m] && s.days_of_month_[d];
    }
    if (!possible) {
      return Error{"\"" + std::string(text) + "\" can never fire: no selected month has the selected day of month"};
    }
  }
  // Any other combination that never happens (29 February that is also a
  // day-of-week the calendar never gives it) shows in one 400-year cycle.
  const LocalTime cycle_start{date::local_days(date::year(2000) / 1 / 1)};
  if (!s.next_local_match(cycle_start, cycle_start + kHorizon)) {
    return Error{"\"" + std::string(text) + "\" can never fire"};
  }
  return s;
}

bool CronSchedule::day_matches(date::sys_days day) const {
  const date::year_month_day ymd(day);
  const bool dom = days_of_month_[static_cast<unsigned>(ymd.day())];
  const bool dow = days_of_week_[date::weekday(day).c_encoding()];
  return (dom_star_ || dow_star_) ? (dom && dow) : (dom || dow);
}

std::optional<LocalTime> CronSchedule::next_local_match(LocalTime from, LocalTime horizon) const {
  using std::chrono::hours;
  using std::chrono::minutes;
  using std::chrono::seconds;
  LocalTime t = from;
  while (t < horizon) {
    const date::local_days day = date::floor<date::days>(t);
    const date::year_month_day ymd(day);
    if (!months_[static_cast<unsigned>(ymd.month())]) {
      date::year_month next_month = ymd.year() / ymd.month();
      next_month += date::months(1);
      t = date::local_days(next_month / 1);
      continue;
    }
    if (!day_matches(date::sys_days(day.time_since_epoch()))) {
      t = day + date::days(1);
      continue;
    }
    const date::hh_mm_ss<seconds> tod(t - day);
    const unsigned h = static_cast<unsigned>(tod.hours().count());
    const unsigned m = static_cast<unsigned>(tod.minutes().count());
    const unsigned s = static_cast<unsigned>(tod.seconds().count());
    const int nh = next_set(hours_, h);
    if (nh < 0) {
      t = day + date::days(1);
      continue;
    }
    if (static_cast<unsigned>(nh) != h) {
      t = day + hours(nh);
      continue;
    }
    const int nm = next_set(minutes_, m);
    if (nm < 0) {
      t = day + hours(h + 1);
      continue;
    }
    if (static_cast<unsigned>(nm) != m) {
      t = day + hours(h) + minutes(nm);
      continue;
    }
    const int ns = next_set(seconds_, s);
    if (ns < 0) {
      t = day + hours(h) + minutes(m + 1);
      continue;
    }
    return day + hours(h) + minutes(m) + seconds(ns);
  }
  return std::nullopt;
}

std::optional<Instant> CronSchedule::next_after(Instant after, const TimeZone& zone) const {
  const bool every_hour = runs_every_hour();
  const Instant horizon = after + kHorizon;
  const auto to_local = [](Instant t, std::chrono::seconds offset) { return LocalTime((t + offset).time_since_epoch()); };

  Instant t = after + 1s;
  // Each pass either returns, or moves t to a later match or the next offset
  // change; the bound only guards against a broken zone table.
  for (int pass = 0; pass < 1'000'000 && t < horizon; ++pass) {
    const date::sys_info info = zone.get_info(t);
    const Instant segment_end = std::min(info.end, horizon);

    // Fixed-hour schedules: local times skipped by a spring-forward gap that
    // ends exactly at t fire once, at t.
    if (!every_hour && t == info.begin && t > after) {
      const date::sys_info before = zone.get_info(t - 1s);
      if (before.offset < info.offset &&
          next_local_match(to_local(t, before.offset), to_local(t, info.offset))) {
        return t;
      }
    }

    const auto match = next_local_match(to_local(t, info.offset), to_local(segment_end, info.offset));
    if (!match) {
      t = segment_end;
      continue;
    }
    const Instant candidate = Instant((*match).time_since_epoch()) - info.offset;

    // Fixed-hour schedules fire a repeated local time only at its first occurrence.
    if (!every_hour && candidate - info.begin < date::days(1)) {
      const date::sys_info previous = zone.get_info(info.begin - 1s);
      if (previous.offset > info.offset && *match < to_local(info.begin, previous.offset)) {
        t = candidate + 1s;
        continue;
      }
    }
    return candidate;
  }
  return std::nullopt;
}

}  // namespace tidemark
