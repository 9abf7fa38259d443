#include "daemon/serve/systemd_notifier.h"

#include <systemd/sd-daemon.h>

#include <ctime>

namespace tidemark {

void SystemdNotifier::ready(const std::string& status) { sd_notifyf(0, "READY=1\nSTATUS=%s", status.c_str()); }

void SystemdNotifier::reloading() {
  // MONOTONIC_USEC lets systemd 253+ match the reload to this notification.
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  const unsigned long long usec =
      static_cast<unsigned long long>(ts.tv_sec) * 1000000ULL + static_cast<unsigned long long>(ts.tv_nsec) / 1000ULL;
  sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=reloading the configuration", usec);
}

void SystemdNotifier::stopping() { sd_notify(0, "STOPPING=1\nSTATUS=stopping: waiting for runs in flight"); }

void SystemdNotifier::start_watchdog() {
  uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0) return;
  interval_ = std::chrono::microseconds(usec / 2);
  pet();
}

void SystemdNotifier::pet() {
  sd_notify(0, "WATCHDOG=1");
  watchdog_.expires_after(interval_);
  watchdog_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) pet();
  });
}

}  // namespace tidemark
