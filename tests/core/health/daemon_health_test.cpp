// /healthz and /readyz as decisions: the loop is alive while its last beat
// is within the allowed silence; ready needs a loaded configuration, no
// shutdown under way and a state database the last check reached.
#include <doctest/doctest.h>

#include "core/health/daemon_health.h"

namespace tidemark {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST_CASE("the loop is alive while its last beat is no older than the allowed silence") {
  CHECK(judge_liveness(seconds(0), seconds(5)).ok);
  CHECK(judge_liveness(seconds(5), seconds(5)).ok);
  CHECK(judge_liveness(-milliseconds(3), seconds(5)).ok);  // a beat stored after `now` was read

  const HealthVerdict stuck = judge_liveness(milliseconds(7300), seconds(5));
  CHECK_FALSE(stuck.ok);
  CHECK(stuck.reason == "the event loop has not turned for 7.3 s");
  CHECK(judge_liveness(seconds(5) + milliseconds(1), seconds(5)).ok == false);
  CHECK(judge_liveness(seconds(0), seconds(5)).reason.empty());
}

TEST_CASE("ready once the configuration is loaded and the state database was reached") {
  ReadinessFacts facts;
  facts.state_connection = "warehouse";
  CHECK(judge_readiness(facts).reason == "the configuration is not loaded yet");

  facts.config_loaded = true;
  CHECK_FALSE(judge_readiness(facts).ok);
  CHECK(judge_readiness(facts).reason == "the state database warehouse has not been checked yet");

  facts.state_up = true;
  CHECK(judge_readiness(facts).ok);
  CHECK(judge_readiness(facts).reason.empty());

  facts.state_up = false;
  facts.state_error = "cannot connect to warehouse: connection to server on socket \"/run/pg/.s.PGSQL.5432\" "
                      "failed: No such file or directory\n\tIs the server running locally?\n";
  const HealthVerdict down = judge_readiness(facts);
  CHECK_FALSE(down.ok);
  // One line, whatever libpq's message spans.
  CHECK(down.reason == "the state database warehouse is unreachable: cannot connect to warehouse: connection to "
                       "server on socket \"/run/pg/.s.PGSQL.5432\" failed: No such file or directory \tIs the "
                       "server running locally?");

  facts.state_error.clear();
  CHECK(judge_readiness(facts).reason == "the state database warehouse is unreachable");

  facts.state_up = true;
  facts.stopping = true;
  CHECK(judge_readiness(facts).reason == "stopping");
}

}  // namespace tidemark
