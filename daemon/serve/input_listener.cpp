#include "daemon/serve/input_listener.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <chrono>

#include "daemon/pg/state/pg_state_store.h"

namespace tidemark {
namespace {

// How long a wait for notifications lasts before the thread looks whether
// it should stop; and how long it waits before opening a session again.
constexpr std::chrono::milliseconds kWaitSlice{500};
constexpr std::chrono::milliseconds kRetryAfter{5000};

}  // namespace

bool has_inputs(const Config& config) {
  for (const PipelineConfig& p : config.pipelines) {
    for (const TableConfig& t : p.tables) {
      if (!t.inputs.empty()) return true;
    }
  }
  return false;
}

InputListener::InputListener(OnMoved on_moved)
    : on_moved_(std::move(on_moved)), session_(std::string(kMovedChannel), {kWaitSlice, kRetryAfter}, *this) {}

void InputListener::set_config(std::shared_ptr<const Config> config) {
  // Once listening, a reload without inputs keeps the session: a later
  // one may bring them back.
  if (has_inputs(*config)) listening_ = true;
  if (listening_) session_.set_config(std::move(config));
}

void InputListener::opened(PgConnection&, bool after_failure) {
  if (after_failure) spdlog::info("inputs: listening again for tables that move");
}

void InputListener::heard(PgConnection&, const std::vector<std::string>& payloads) {
  for (const std::string& payload : payloads) {
    const auto table = nlohmann::json::parse(payload, nullptr, /*allow_exceptions=*/false);
    if (!table.is_array() || table.size() != 2 || !table[0].is_string() || !table[1].is_string()) continue;
    const TableKey moved{table[0].get<std::string>(), table[1].get<std::string>()};
    spdlog::debug("inputs: {} moved", moved.display());
    on_moved_(moved);
  }
}

void InputListener::failed(const std::exception& error, bool first) {
  if (first) {
    spdlog::warn("inputs: cannot listen for tables that move ({}); dependents run at their schedules until it can",
                 error.what());
  }
}

}  // namespace tidemark
