#include "core/fleet/keepalive_times.h"

#include <doctest/doctest.h>

namespace tidemark {
namespace {

using std::chrono::seconds;

TEST_CASE("keepalives: a vanished member's sessions end after more than one lease and at most two") {
  struct Case {
    seconds lease;
    seconds idle;
    seconds interval;
    seconds dead_after;
  };
  const Case cases[] = {
      {seconds(3), seconds(3), seconds(1), seconds(6)},
      {seconds(6), seconds(6), seconds(2), seconds(12)},
      {seconds(10), seconds(10), seconds(3), seconds(19)},
      {seconds(300), seconds(300), seconds(100), seconds(600)},
  };
  for (const Case& c : cases) {
    CAPTURE(c.lease.count());
    const KeepaliveTimes t = KeepaliveTimes::for_lease(c.lease);
    CHECK(t.idle == c.idle);
    CHECK(t.interval == c.interval);
    CHECK(t.count == 3);
    CHECK(t.dead_after() == c.dead_after);
    // The others take the tables one lease after the last renewal: the
    // locks must not go before the lease could have ended.
    CHECK(t.dead_after() > c.lease);
    CHECK(t.dead_after() <= 2 * c.lease);
  }
}

}  // namespace
}  // namespace tidemark
