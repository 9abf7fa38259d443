#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <spdlog/spdlog.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <optional>
#include <ostream>

#include "daemon/commands/command_support.h"
#include "daemon/commands/commands.h"
#include "daemon/config_loader.h"
#include "daemon/commands/exit_code.h"
#include "daemon/serve/endpoint_security.h"
#include "daemon/serve/fleet_membership.h"
#include "daemon/serve/health_state.h"
#include "daemon/serve/http_endpoint.h"
#include "daemon/serve/input_listener.h"
#include "daemon/serve/loop_heartbeat.h"
#include "daemon/serve/metrics_registry.h"
#include "daemon/serve/pause_watch.h"
#include "daemon/serve/scheduler.h"
#include "daemon/serve/state_monitor.h"
#include "daemon/serve/systemd_notifier.h"
#include "daemon/version.h"

namespace tidemark {
namespace {

constexpr std::chrono::seconds kMonitorInterval{15};

// Gives the pages that loading the configuration freed back to the
// system. Parsing YAML allocates far more than the configuration it leaves
// (yaml-cpp's node trees, 4 KiB or so per table), interleaved with what
// stays, so glibc's free cannot shrink the heap by itself: without this a
// daemon of 50,000 tables kept some 40 MiB it no longer used.
void release_freed_memory() {
#ifdef __GLIBC__
  ::malloc_trim(0);
#endif
}

// Large buffers go straight to the system and back. The text of a scrape
// (13 MB at 10,000 tables) is allocated and freed at every scrape; glibc
// would otherwise raise its mapping threshold past it after the first,
// serve the next from the heap and keep those pages when it is freed.
void return_large_buffers_on_free() {
#ifdef __GLIBC__
  ::mallopt(M_MMAP_THRESHOLD, 4 * 1024 * 1024);
#endif
}

std::string status_line(const Config& config) {
  std::size_t tables = 0;
  for (const PipelineConfig& p : config.pipelines) tables += p.tables.size();
  return std::to_string(config.pipelines.size()) + " pipelines, " + std::to_string(tables) + " tables";
}

// The metrics endpoint opened on metrics.listen, guarded as
// metrics.web_config says: how it is reached ("http" or "https") and what
// guards it, or the exit code when it cannot open (said in the log).
struct EndpointOpened {
  int exit_code = kExitOk;
  std::string scheme;
  std::string guarded;
};
EndpointOpened open_endpoint(HttpEndpoint& http, const MetricsConfig& metrics) {
  auto security = make_endpoint_security(metrics);
  if (!security) {
    spdlog::critical("{}", security.error());
    return {kExitUsage, {}, {}};
  }
  EndpointOpened opened{kExitOk, security->tls ? "https" : "http", security->describe()};
  try {
    http.listen(metrics, std::move(security).value());
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    opened.exit_code = kExitFailure;
  }
  return opened;
}

// The daemon file read again on SIGHUP, with the web configuration it
// names (a renewed certificate or a changed password applies to the
// connections accepted from now on, `http` secured with it here). Nothing,
// with the errors logged, when either is invalid: the one in use stays.
ConfigPtr read_reload(const std::string& path, HttpEndpoint& http) {
  auto loaded = load_config(path);
  std::optional<Result<EndpointSecurity>> security;
  if (loaded.value) security = make_endpoint_security(loaded.value->daemon.metrics);
  if (!loaded.value || !*security) {
    for (const ConfigError& e : loaded.errors) spdlog::error("reload: {}", e.to_string());
    if (security && !*security) spdlog::error("reload: {}", security->error());
    spdlog::error("reload: the configuration is invalid; keeping the one in use");
    return nullptr;
  }
  http.secure(std::move(*security).value());
  return std::make_shared<const Config>(std::move(*loaded.value));
}

// The settings read once, at start: said when a reload changes one.
void warn_of_settings_kept(const Config& before, const Config& after) {
  if (after.daemon.max_concurrent_runs != before.daemon.max_concurrent_runs ||
      after.daemon.metrics.listen != before.daemon.metrics.listen ||
      after.daemon.log.level != before.daemon.log.level || after.daemon.log.format != before.daemon.log.format ||
      after.daemon.fleet.lease != before.daemon.fleet.lease) {
    spdlog::warn("reload: max_concurrent_runs, metrics.listen, log and fleet.lease take effect at the next start");
  }
}

}  // namespace

int run_serve(const ConfigPtr& initial, const ServeOptions& command_line, std::ostream&, std::ostream&) {
  ConfigPtr config = initial;  // replaced by each valid reload
  if (const auto refusal = state_session_refusal(*config)) {
    spdlog::critical("{}", *refusal);
    return kExitUsage;
  }

  return_large_buffers_on_free();
  MetricsRegistry metrics;
  HealthState health;
  HttpEndpoint http(metrics, health);
  const EndpointOpened endpoint = open_endpoint(http, config->daemon.metrics);
  if (endpoint.exit_code != kExitOk) return endpoint.exit_code;
  metrics.set_config(*config);
  health.config_loaded(config->daemon.state);
  spdlog::info("tidemark {} serving {} (metrics on {}://{}/metrics, /healthz, /readyz; {})", kVersion,
               status_line(*config), endpoint.scheme, config->daemon.metrics.listen, endpoint.guarded);

  boost::asio::io_context loop;
  SystemdNotifier systemd(loop);
  LoopHeartbeat heartbeat(loop, health);
  StateMonitor monitor(metrics, health, kMonitorInterval);
  Scheduler scheduler(loop, metrics, monitor, static_cast<std::size_t>(config->daemon.max_concurrent_runs));
  // Each renewal's view goes to the loop, which owns the scheduler. The
  // first one that settles catches up the firings missed while down.
  FleetMembership fleet(*config, [&](FleetView view, std::optional<LastStarts> last_starts) {
    boost::asio::post(loop, [&scheduler, view = std::move(view), last_starts = std::move(last_starts)]() mutable {
      scheduler.assign(std::move(view), last_starts);
    });
  });
  // A table that moved, on this member or another, wakes its dependents.
  InputListener inputs([&](const TableKey& table) {
    boost::asio::post(loop, [&scheduler, table] { scheduler.input_moved(table); });
  });
  // The pauses go to the loop too; the scheduler holds the fleet's views
  // until the first reading, so a paused table never catches up at start.
  PauseWatch pauses([&](PauseSet read, std::vector<CatchUpResume> catch_ups) {
    boost::asio::post(loop, [&scheduler, &metrics, read = std::move(read), catch_ups = std::move(catch_ups)]() mutable {
      metrics.set_pauses(read);
      scheduler.set_pauses(std::move(read), catch_ups);
    });
  });
  monitor.start(config);
  scheduler.start_in_fleet(config);
  fleet.start(config);
  inputs.set_config(config);
  pauses.set_config(config);
  release_freed_memory();

  // Signal handlers only post work to the loop: Asio runs these handlers
  // there, never in signal context.
  boost::asio::signal_set signals(loop, SIGHUP, SIGTERM, SIGINT);
  std::function<void(const boost::system::error_code&, int)> on_signal;
  bool stopping = false;
  on_signal = [&](const boost::system::error_code& ec, int signal) {
    if (ec) return;
    if (signal == SIGHUP && !stopping) {
      systemd.reloading();
      if (ConfigPtr next = read_reload(command_line.config_path, http); !next) {
        metrics.reload_succeeded(false);
      } else {
        warn_of_settings_kept(*config, *next);
        config = next;
        health.config_loaded(config->daemon.state);
        scheduler.reload(config);
        metrics.set_config(*config);
        monitor.set_config(config);
        fleet.set_config(config);
        inputs.set_config(config);
        pauses.set_config(config);
        metrics.reload_succeeded(true);
        release_freed_memory();
        spdlog::info("reload: now serving {}", status_line(*config));
      }
      systemd.ready(status_line(*config));
    } else if (signal == SIGTERM || signal == SIGINT) {
      if (stopping) return;
      stopping = true;
      health.stopping();
      systemd.stopping();
      spdlog::info("stopping: no new runs will start");
      scheduler.stop(config->daemon.shutdown_grace, [&] {
        signals.cancel();
        systemd.stop_watchdog();
        heartbeat.stop();
        monitor.stop();
      });
      // After the scheduler stopped firing: the others take this member's
      // tables at their next renewal, while its runs in flight finish
      // under their locks.
      fleet.leave();
    }
    if (!stopping) signals.async_wait(on_signal);
  };
  signals.async_wait(on_signal);

  systemd.ready(status_line(*config));
  systemd.start_watchdog();
  heartbeat.start();
  loop.run();  // returns once the stop path has cancelled every pending wait
  inputs.stop();
  pauses.stop();
  // Off the loop: a round may take up to its statement timeout.
  fleet.stop();

  if (scheduler.in_flight() > 0) {
    spdlog::error("exiting with {} run(s) still blocked; their transactions roll back", scheduler.in_flight());
    spdlog::default_logger()->flush();
    std::_Exit(kExitOk);
  }
  spdlog::info("stopped");
  return kExitOk;
}

}  // namespace tidemark
