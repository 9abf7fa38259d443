// Hears that tables moved (PgStateStore::announce_moved, from any member of
// the fleet) on a listening state session of its own, and hands each table
// heard of to `on_moved`, so that the scheduler wakes its dependents.
// Listens from the first configuration with a table with inputs. Owns its
// session's thread; public methods are thread-safe; `on_moved` is called
// on that thread.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/config/config_model.h"
#include "core/run/table_key.h"
#include "daemon/serve/listening_session.h"

namespace tidemark {

class InputListener : private ListeningSession::Client {
 public:
  using OnMoved = std::function<void(const TableKey&)>;

  explicit InputListener(OnMoved on_moved);
  ~InputListener() override { stop(); }
  InputListener(const InputListener&) = delete;
  InputListener& operator=(const InputListener&) = delete;

  // Starts listening when `config` has a table with inputs; a reload's
  // configuration takes the place of the one before.
  void set_config(std::shared_ptr<const Config> config);
  // Ends the thread; idempotent.
  void stop() { session_.stop(); }

 private:
  void opened(PgConnection& session, bool after_failure) override;
  void heard(PgConnection& session, const std::vector<std::string>& payloads) override;
  void failed(const std::exception& error, bool first) override;

  OnMoved on_moved_;
  std::atomic<bool> listening_{false};
  ListeningSession session_;  // last: its thread stops before the rest goes
};

// Whether any table of `config` names inputs: only then is listening worth
// a session.
bool has_inputs(const Config& config);

}  // namespace tidemark
