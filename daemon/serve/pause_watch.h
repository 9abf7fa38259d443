// Keeps this member's pauses current: reads them (PauseBook) on a
// listening state session of its own, once each time it opens, at once
// when `pause` or `resume` announces a change, and every kPollEvery
// besides, for a pause written without the announcement (by hand, in
// SQL). It hands every reading that differs from the last, and every
// catch-up resume, to `on_pauses`; the first reading always. Owns its
// session's thread; public methods are thread-safe; `on_pauses` is called
// on that thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "core/config/config_model.h"
#include "core/schedule/pause_set.h"
#include "daemon/serve/listening_session.h"

namespace tidemark {

class PauseWatch : private ListeningSession::Client {
 public:
  using OnPauses = std::function<void(PauseSet, std::vector<CatchUpResume>)>;

  // A pause written without its announcement is obeyed within this.
  static constexpr std::chrono::seconds kPollEvery{5};

  explicit PauseWatch(OnPauses on_pauses);
  ~PauseWatch() override { stop(); }
  PauseWatch(const PauseWatch&) = delete;
  PauseWatch& operator=(const PauseWatch&) = delete;

  // Starts reading at the first call; a reload's configuration takes the
  // place of the one before (its state database may have moved).
  void set_config(std::shared_ptr<const Config> config) { session_.set_config(std::move(config)); }
  // Ends the thread; idempotent.
  void stop() { session_.stop(); }

 private:
  void opened(PgConnection& session, bool after_failure) override;
  void heard(PgConnection& session, const std::vector<std::string>& payloads) override;
  void failed(const std::exception& error, bool first) override;
  void read(PgConnection& session);

  OnPauses on_pauses_;
  // Touched on the session's thread only.
  std::optional<PauseSet> told_;             // the last reading handed over
  std::optional<std::int64_t> last_event_;   // the newest audit event read
  std::chrono::steady_clock::time_point read_at_;
  std::chrono::steady_clock::time_point next_complaint_;
  ListeningSession session_;  // last: its thread stops before the rest goes
};

}  // namespace tidemark
