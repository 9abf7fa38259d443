#include "core/schedule/pause_set.h"

#include <doctest/doctest.h>

namespace tidemark {
namespace {

Pause pause_for(std::string pipeline, std::string table, std::string reason) {
  Pause p;
  p.pipeline = std::move(pipeline);
  p.table = std::move(table);
  p.reason = std::move(reason);
  p.paused_by = "ops";
  p.paused_at = 1'700'000'000;
  return p;
}

TEST_CASE("a table is held by its own pause first, else by its pipeline's") {
  const PauseSet pauses({pause_for("sales", "", "source in maintenance"), pause_for("sales", "orders", "bad rows"),
                         pause_for("web", "events", "replaying")});
  REQUIRE(pauses.pause_of({"sales", "orders"}) != nullptr);
  CHECK(pauses.pause_of({"sales", "orders"})->reason == "bad rows");
  REQUIRE(pauses.pause_of({"sales", "customers"}) != nullptr);
  CHECK(pauses.pause_of({"sales", "customers"})->reason == "source in maintenance");
  CHECK(pauses.pause_of({"sales", "customers"})->scope() == "pipeline sales");
  CHECK(pauses.paused({"web", "events"}));
  CHECK_FALSE(pauses.paused({"web", "clicks"}));
  CHECK_FALSE(pauses.paused({"sales2", "orders"}));
  CHECK_FALSE(PauseSet().paused({"sales", "orders"}));
}

TEST_CASE("two pause sets are equal whatever order their pauses were read in") {
  const PauseSet a({pause_for("a", "t", "r"), pause_for("b", "", "r")});
  const PauseSet b({pause_for("b", "", "r"), pause_for("a", "t", "r")});
  CHECK(a == b);
  CHECK(a != PauseSet({pause_for("a", "t", "another reason"), pause_for("b", "", "r")}));
  CHECK(a != PauseSet({pause_for("a", "t", "r")}));
}

TEST_CASE("a catch-up resume covers its table, or every table of its pipeline") {
  CHECK(CatchUpResume{"sales", "", 0}.covers({"sales", "orders"}));
  CHECK(CatchUpResume{"sales", "orders", 0}.covers({"sales", "orders"}));
  CHECK_FALSE(CatchUpResume{"sales", "orders", 0}.covers({"sales", "customers"}));
  CHECK_FALSE(CatchUpResume{"sales", "", 0}.covers({"web", "orders"}));
}

}  // namespace
}  // namespace tidemark
