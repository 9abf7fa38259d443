// This daemon's membership in the fleet (tidemark.members): a thread that
// joins, renews the lease every third of it on a state session of its own
// (opened again after a failure), and hands each renewal's FleetView to
// `on_view`, with the tables' last starts when that view may give this
// member tables. leave() makes it remove the member's row and end, so the
// others take its tables at their next renewal. Owns one thread; public
// methods are thread-safe; `on_view` is called on that thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/config/config_model.h"
#include "core/fleet/fleet_view.h"
#include "core/fleet/member_lease.h"
#include "core/schedule/job_kind.h"

namespace tidemark {

class PgConnection;

class FleetMembership {
 public:
  using OnView = std::function<void(FleetView, std::optional<LastStarts>)>;

  // The lease is the configuration's at start (fleet.lease); a reload's
  // takes effect at the next start.
  FleetMembership(const Config& config, OnView on_view);
  ~FleetMembership() { stop(); }

  // A generated id, unique to this process: 32 hex digits.
  const std::string& member_id() const { return lease_.self(); }

  void start(std::shared_ptr<const Config> config);
  // The tables whose last starts a view reads.
  void set_config(std::shared_ptr<const Config> config);
  // Stops renewing and removes this member's row; returns at once.
  void leave();
  // Ends the thread (after leaving, if asked); idempotent.
  void stop();

 private:
  void loop();
  // One join-and-renew round; returns when the next one is due, on the
  // steady clock.
  std::chrono::steady_clock::time_point round(const Config& config);
  void say_gone(const Config& config);
  // Makes the session's statements give up before the next renewal is due.
  void limit_statements(PgConnection& state) const;

  MemberLease lease_;  // the thread's
  FleetMember me_;
  OnView on_view_;
  FleetView view_ = FleetView::none();  // the last one handed over; the thread's
  std::unique_ptr<PgConnection> state_;  // the thread's
  bool failing_ = false;                // the thread's: the last round failed (logged once)
  bool migrated_ = false;               // the thread's
  std::mutex mutex_;
  std::condition_variable wake_;
  std::shared_ptr<const Config> config_;
  bool leaving_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace tidemark
