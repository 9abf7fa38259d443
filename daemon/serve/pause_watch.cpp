#include "daemon/serve/pause_watch.h"

#include <spdlog/spdlog.h>

#include <stdexcept>

#include "daemon/pg/state/pause_book.h"

namespace tidemark {
namespace {

// How long a wait for notifications lasts before the thread looks whether
// it should stop or read anyway; and how long it waits before opening a
// session again.
constexpr std::chrono::milliseconds kWaitSlice{250};
constexpr std::chrono::milliseconds kRetryAfter{2000};

// Says what changed from `before` to `after`: each pause begun, ended or
// given another reason.
void log_changes(const PauseSet& before, const PauseSet& after) {
  const auto held = [](const PauseSet& set, const Pause& p) {
    for (const Pause& q : set.pauses()) {
      if (q.pipeline == p.pipeline && q.table == p.table) return &q;
    }
    return static_cast<const Pause*>(nullptr);
  };
  for (const Pause& p : after.pauses()) {
    const Pause* was = held(before, p);
    if (was == nullptr || was->reason != p.reason) {
      spdlog::info("pauses: {} is paused (by {}: {}); it does not fire until resumed", p.scope(), p.paused_by,
                   p.reason);
    }
  }
  for (const Pause& p : before.pauses()) {
    if (held(after, p) == nullptr) spdlog::info("pauses: {} is resumed", p.scope());
  }
}

}  // namespace

PauseWatch::PauseWatch(OnPauses on_pauses)
    : on_pauses_(std::move(on_pauses)), session_(std::string(kPausesChannel), {kWaitSlice, kRetryAfter}, *this) {}

void PauseWatch::opened(PgConnection& session, bool after_failure) {
  read(session);
  if (after_failure) spdlog::info("pauses: reading them again");
}

void PauseWatch::heard(PgConnection& session, const std::vector<std::string>& payloads) {
  if (!payloads.empty() || std::chrono::steady_clock::now() >= read_at_) read(session);
}

void PauseWatch::read(PgConnection& session) {
  auto reading = PauseBook(session).read(last_event_);
  if (!reading) throw std::runtime_error(reading.error());
  last_event_ = reading->last_event;
  read_at_ = std::chrono::steady_clock::now() + kPollEvery;
  if (!told_ || *told_ != reading->pauses || !reading->catch_ups.empty()) {
    log_changes(told_ ? *told_ : PauseSet(), reading->pauses);
    told_ = reading->pauses;
    on_pauses_(std::move(reading->pauses), std::move(reading->catch_ups));
  }
}

void PauseWatch::failed(const std::exception& error, bool first) {
  // Before a first reading this member fires nothing (the scheduler waits
  // for it): said as an error, and again every minute.
  const auto now = std::chrono::steady_clock::now();
  if (!told_ && now >= next_complaint_) {
    spdlog::error("pauses: cannot read them ({}); this member fires nothing until it can (grant the daemon's "
                  "role SELECT on tidemark.pauses and tidemark.pause_events)",
                  error.what());
    next_complaint_ = now + std::chrono::minutes(1);
  } else if (told_ && first) {
    spdlog::warn("pauses: cannot read them ({}); the pauses last read stand until it can", error.what());
  }
}

}  // namespace tidemark
