// Hears that tables moved (PgStateStore::announce_moved, from any member of
// the fleet): a thread that LISTENs on the state database, on a session of
// its own (opened again after a failure), and hands each table heard of to
// `on_moved`, so that the scheduler wakes its dependents. Runs only while
// the configuration has a table with inputs; a reload opens its session
// again. Owns one thread; public
// methods are thread-safe; `on_moved` is called on that thread.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "core/config/config_model.h"
#include "core/run/table_key.h"

namespace tidemark {

class InputListener {
 public:
  using OnMoved = std::function<void(const TableKey&)>;

  explicit InputListener(OnMoved on_moved) : on_moved_(std::move(on_moved)) {}
  ~InputListener() { stop(); }
  InputListener(const InputListener&) = delete;
  InputListener& operator=(const InputListener&) = delete;

  // Starts listening when `config` has a table with inputs; a reload's
  // configuration takes the place of the one before.
  void set_config(std::shared_ptr<const Config> config);
  // Ends the thread; idempotent.
  void stop();

 private:
  void loop();
  // Whether a reload replaced the configuration the session listens for.
  bool reloaded(const std::shared_ptr<const Config>& listening);

  OnMoved on_moved_;
  std::mutex mutex_;
  std::shared_ptr<const Config> config_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

// Whether any table of `config` names inputs: only then is listening worth
// a session.
bool has_inputs(const Config& config);

}  // namespace tidemark
