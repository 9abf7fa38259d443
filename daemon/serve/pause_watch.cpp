#include "daemon/serve/pause_watch.h"

#include <spdlog/spdlog.h>

#include <optional>

#include "daemon/pg/data/pipeline_connections.h"
#include "daemon/pg/libpq/pg_connection.h"
#include "daemon/pg/state/pause_book.h"

namespace tidemark {
namespace {

// How long a wait for notifications lasts before the thread looks whether
// it should stop or read anyway; and how long it waits before opening a
// session again.
constexpr std::chrono::milliseconds kWaitSlice{250};
constexpr std::chrono::seconds kRetryAfter{2};

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

void PauseWatch::set_config(std::shared_ptr<const Config> config) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    config_ = std::move(config);
  }
  if (!thread_.joinable() && !stopping_) thread_ = std::thread([this] { loop(); });
}

void PauseWatch::stop() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
}

void PauseWatch::loop() {
  bool failing = false;
  std::optional<PauseSet> told;          // the last reading handed over
  std::optional<std::int64_t> last_event;  // the newest audit event read
  auto next_complaint = std::chrono::steady_clock::time_point{};
  while (!stopping_) {
    std::shared_ptr<const Config> config;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      config = config_;
    }
    try {
      const auto session = connect_to(*config, config->daemon.state);
      session->exec("LISTEN " + std::string(kPausesChannel));
      PauseBook book(*session);
      if (failing) spdlog::info("pauses: reading them again");
      failing = false;
      auto read_at = std::chrono::steady_clock::time_point{};  // read at once
      bool changed = true;
      while (!stopping_) {
        {
          const std::lock_guard<std::mutex> lock(mutex_);
          if (config_ != config) break;  // a reload: its state database's session
        }
        if (changed || std::chrono::steady_clock::now() >= read_at) {
          auto reading = book.read(last_event);
          if (!reading) throw std::runtime_error(reading.error());
          last_event = reading->last_event;
          read_at = std::chrono::steady_clock::now() + kPollEvery;
          if (!told || *told != reading->pauses || !reading->catch_ups.empty()) {
            log_changes(told ? *told : PauseSet(), reading->pauses);
            told = reading->pauses;
            on_pauses_(std::move(reading->pauses), std::move(reading->catch_ups));
          }
        }
        changed = !session->wait_for_notifications(kWaitSlice).empty();
      }
    } catch (const std::exception& e) {
      // Before a first reading this member fires nothing (the scheduler
      // waits for it): said as an error, and again every minute.
      const auto now = std::chrono::steady_clock::now();
      if (!told && now >= next_complaint) {
        spdlog::error("pauses: cannot read them ({}); this member fires nothing until it can (grant the daemon's "
                      "role SELECT on tidemark.pauses and tidemark.pause_events)",
                      e.what());
        next_complaint = now + std::chrono::minutes(1);
      } else if (told && !failing) {
        spdlog::warn("pauses: cannot read them ({}); the pauses last read stand until it can", e.what());
      }
      failing = true;
      for (auto waited = std::chrono::milliseconds(0); waited < kRetryAfter && !stopping_; waited += kWaitSlice) {
        std::this_thread::sleep_for(kWaitSlice);
      }
    }
  }
}

}  // namespace tidemark
