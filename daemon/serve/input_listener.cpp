#include "daemon/serve/input_listener.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <chrono>

#include "daemon/pg/data/pipeline_connections.h"
#include "daemon/pg/libpq/pg_connection.h"
#include "daemon/pg/state/pg_state_store.h"

namespace tidemark {
namespace {

// How long a wait for notifications lasts before the thread looks whether
// it should stop; and how long it waits before opening a session again.
constexpr std::chrono::milliseconds kWaitSlice{500};
constexpr std::chrono::seconds kRetryAfter{5};

}  // namespace

bool has_inputs(const Config& config) {
  for (const PipelineConfig& p : config.pipelines) {
    for (const TableConfig& t : p.tables) {
      if (!t.inputs.empty()) return true;
    }
  }
  return false;
}

void InputListener::set_config(std::shared_ptr<const Config> config) {
  const bool wanted = has_inputs(*config);
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    config_ = std::move(config);
  }
  if (wanted && !thread_.joinable() && !stopping_) thread_ = std::thread([this] { loop(); });
}

bool InputListener::reloaded(const std::shared_ptr<const Config>& listening) {
  // A reload may move the state database: the session is opened again on
  // the new configuration's (a notification lost in between only means
  // a dependent waits for its schedule).
  const std::lock_guard<std::mutex> lock(mutex_);
  return config_ != listening;
}

void InputListener::stop() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
}

void InputListener::loop() {
  bool failing = false;
  while (!stopping_) {
    std::shared_ptr<const Config> config;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      config = config_;
    }
    try {
      const auto session = connect_to(*config, config->daemon.state);
      session->exec("LISTEN " + std::string(kMovedChannel));
      if (failing) spdlog::info("inputs: listening again for tables that move");
      failing = false;
      while (!stopping_ && !reloaded(config)) {
        for (const std::string& payload : session->wait_for_notifications(kWaitSlice)) {
          const auto table = nlohmann::json::parse(payload, nullptr, /*allow_exceptions=*/false);
          if (!table.is_array() || table.size() != 2 || !table[0].is_string() || !table[1].is_string()) continue;
          const TableKey moved{table[0].get<std::string>(), table[1].get<std::string>()};
          spdlog::debug("inputs: {} moved", moved.display());
          on_moved_(moved);
        }
      }
    } catch (const std::exception& e) {
      if (!failing) {
        spdlog::warn("inputs: cannot listen for tables that move ({}); dependents run at their schedules until "
                     "it can",
                     e.what());
      }
      failing = true;
      for (auto waited = std::chrono::milliseconds(0); waited < kRetryAfter && !stopping_; waited += kWaitSlice) {
        std::this_thread::sleep_for(kWaitSlice);
      }
    }
  }
}

}  // namespace tidemark
