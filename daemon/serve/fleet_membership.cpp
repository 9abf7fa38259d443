#include "daemon/serve/fleet_membership.h"

#include <unistd.h>

#include <random>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "daemon/pg/data/pipeline_connections.h"
#include "daemon/pg/state/member_registry.h"
#include "daemon/pg/state/state_reader.h"
#include "daemon/pg/state/state_schema.h"
#include "daemon/version.h"

namespace tidemark {
namespace {

std::string generated_member_id() {
  std::random_device random;
  std::string id;
  for (int i = 0; i < 4; ++i) id += fmt::format("{:08x}", random());
  return id;
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

}  // namespace

FleetMembership::FleetMembership(const Config& config, OnView on_view)
    : lease_(generated_member_id(), config.daemon.fleet.lease), on_view_(std::move(on_view)) {
  me_.member_id = lease_.self();
  me_.host = host_name();
  me_.pid = static_cast<int>(::getpid());
  me_.version = kVersion;
}

void FleetMembership::start(std::shared_ptr<const Config> config) {
  set_config(std::move(config));
  spdlog::info("fleet: this member is {} ({} pid {}), lease {} s", me_.member_id, me_.host, me_.pid,
               lease_.lease().count());
  thread_ = std::thread([this] { loop(); });
}

void FleetMembership::set_config(std::shared_ptr<const Config> config) {
  const std::lock_guard<std::mutex> lock(mutex_);
  config_ = std::move(config);
}

void FleetMembership::leave() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    leaving_ = true;
  }
  wake_.notify_one();
}

void FleetMembership::stop() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void FleetMembership::loop() {
  for (;;) {
    std::shared_ptr<const Config> config;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (leaving_) break;  // even when stopping too: the others must not wait for the lease
      if (stopping_) return;
      config = config_;
    }
    const auto next = round(*config);
    std::unique_lock<std::mutex> lock(mutex_);
    wake_.wait_until(lock, next, [this] { return stopping_ || leaving_; });
  }
  std::shared_ptr<const Config> config;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    config = config_;
  }
  say_gone(*config);
}

std::chrono::steady_clock::time_point FleetMembership::round(const Config& config) {
  const auto started = std::chrono::steady_clock::now();
  try {
    if (!state_) {
      auto state = connect_to(config, config.daemon.state);
      if (!migrated_) {
        migrate_state_schema(*state);  // as long as it takes: once
        migrated_ = true;
      }
      state_ = std::move(state);
      limit_statements(*state_);
    }
    MemberRegistry registry(*state_);
    if (lease_.must_join()) {
      const auto joined = registry.join(me_, lease_.lease());
      if (!joined) throw std::runtime_error(joined.error());
      lease_.joined(*joined);
    }
    const auto sent = std::chrono::steady_clock::now().time_since_epoch();
    const auto renewal = registry.renew(me_.member_id, lease_.lease());
    if (!renewal) throw std::runtime_error(renewal.error());
    const auto received = std::chrono::steady_clock::now().time_since_epoch();
    FleetView view = lease_.renewed(*renewal, sent, received);
    std::optional<LastStarts> last_starts;
    if (MemberLease::may_gain(view_, view, received)) {
      // Without them a table gained is not caught up, unless this member
      // skipped its firing itself; the view goes to the scheduler anyway,
      // or it would act on the old one until that lapsed.
      auto starts = StateReader(*state_).last_run_starts(configured_tables(config));
      if (starts) {
        last_starts = std::move(starts).value();
      } else {
        spdlog::warn("fleet: cannot read the tables' last runs ({}); tables gained now are not caught up",
                     starts.error());
      }
    }
    if (failing_) spdlog::info("fleet: the state database answers again");
    failing_ = false;
    // The lease ended (this member was paused or cut off): join again at once.
    const bool lost = view.members().empty();
    view_ = view;
    on_view_(std::move(view), std::move(last_starts));
    return lost ? started : started + lease_.renew_every();
  } catch (const std::exception& e) {
    state_.reset();  // a session in doubt is not reused
    if (!failing_) spdlog::warn("fleet: cannot renew this member's lease in {}: {}", config.daemon.state, e.what());
    failing_ = true;
    return started + lease_.renew_every() / 2;
  }
}

void FleetMembership::limit_statements(PgConnection& state) const {
  // A statement that hangs must not hold the renewals up for longer than
  // the time between two of them.
  const auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(lease_.renew_every());
  state.exec("set statement_timeout = " + std::to_string(timeout.count()));
}

void FleetMembership::say_gone(const Config& config) {
  try {
    if (!state_) {
      state_ = connect_to(config, config.daemon.state);
      limit_statements(*state_);
    }
    const auto left = MemberRegistry(*state_).leave(me_.member_id);
    if (!left) throw std::runtime_error(left.error());
    spdlog::info("fleet: left; the other members take this one's tables now");
  } catch (const std::exception& e) {
    spdlog::warn("fleet: cannot leave ({}); the others take this member's tables when its lease ends", e.what());
  }
}

}  // namespace tidemark
