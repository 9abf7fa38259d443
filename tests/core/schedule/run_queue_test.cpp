// The queue of firings waiting for a worker: order, coalescing, reload and stop.
#include <doctest/doctest.h>

#include "core/time/instant_text.h"
#include "core/schedule/run_queue.h"

namespace tidemark {
namespace {

Firing firing(const char* table, const char* at, RunTrigger trigger = RunTrigger::Schedule) {
  return Firing{TableKey{"p", table}, *parse_instant(at), trigger};
}

}  // namespace

TEST_CASE("firings start while workers are free, then wait; none is dropped for lack of a worker") {
  RunQueue q(2);
  CHECK(q.offer(firing("a", "2026-01-01T00:00:00Z")) == RunQueue::Offer::Start);
  CHECK(q.offer(firing("b", "2026-01-01T00:00:00Z")) == RunQueue::Offer::Start);
  for (const char* t : {"c", "d", "e"}) CHECK(q.offer(firing(t, "2026-01-01T00:00:00Z")) == RunQueue::Offer::Queued);
  CHECK(q.running() == 2);
  CHECK(q.waiting() == 3);
  // Each finished run hands its worker to the next waiting firing, in arrival order.
  std::string started;
  for (const char* done : {"a", "b", "c", "d", "e"}) {
    const auto next = q.finished(TableKey{"p", done});
    if (next) started += next->table.table;
  }
  CHECK(started == "cde");
  CHECK(q.running() == 0);
  CHECK(q.waiting() == 0);
}

TEST_CASE("the oldest scheduled firing goes first, whatever order they arrived in") {
  RunQueue q(1);
  REQUIRE(q.offer(firing("busy", "2026-01-01T00:00:00Z")) == RunQueue::Offer::Start);
  q.offer(firing("late", "2026-01-01T00:05:00Z"));
  q.offer(firing("retry", "2026-01-01T00:01:00Z", RunTrigger::Retry));
  q.offer(firing("startup", "2026-01-01T00:00:00Z", RunTrigger::Startup));
  std::string order;
  TableKey done{"p", "busy"};
  while (const auto next = q.finished(done)) {
    order += next->table.table + " ";
    done = next->table;
  }
  CHECK(order == "startup retry late ");
}

TEST_CASE("a table running or already waiting is coalesced: at most one waiting firing per table") {
  RunQueue q(1);
  REQUIRE(q.offer(firing("a", "2026-01-01T00:00:00Z")) == RunQueue::Offer::Start);
  CHECK(q.offer(firing("a", "2026-01-01T00:00:10Z")) == RunQueue::Offer::Overrun);  // still running
  CHECK(q.offer(firing("b", "2026-01-01T00:00:10Z")) == RunQueue::Offer::Queued);
  CHECK(q.offer(firing("b", "2026-01-01T00:00:20Z")) == RunQueue::Offer::Overrun);  // already waiting
  CHECK(q.waiting() == 1);
  const auto next = q.finished(TableKey{"p", "a"});
  REQUIRE(next);
  CHECK(format_instant(next->scheduled) == "2026-01-01T00:00:10Z");  // the first firing keeps its place
  CHECK(q.is_running(TableKey{"p", "b"}));
  // Once a run ends, the table's next firing is welcome again.
  CHECK(q.offer(firing("a", "2026-01-01T00:00:30Z")) == RunQueue::Offer::Queued);
}

TEST_CASE("a reload drops the waiting firing of a removed table; stopping drops them all") {
  RunQueue q(1);
  REQUIRE(q.offer(firing("a", "2026-01-01T00:00:00Z")) == RunQueue::Offer::Start);
  q.offer(firing("gone", "2026-01-01T00:00:01Z"));
  q.offer(firing("kept", "2026-01-01T00:00:02Z"));
  CHECK(q.remove(TableKey{"p", "gone"}));
  CHECK_FALSE(q.remove(TableKey{"p", "gone"}));
  CHECK_FALSE(q.remove(TableKey{"p", "a"}));  // running, not waiting: it finishes
  CHECK(q.waiting() == 1);
  const auto dropped = q.clear();
  REQUIRE(dropped.size() == 1);
  CHECK(dropped[0].table.table == "kept");
  CHECK_FALSE(q.finished(TableKey{"p", "a"}));  // nothing starts after a stop
}

TEST_CASE("a worker takes waiting firings along; it is free once each of them finished or went back to wait") {
  RunQueue q(2);
  REQUIRE(q.offer(firing("lead", "2026-01-01T00:00:00Z")) == RunQueue::Offer::Start);
  REQUIRE(q.offer(firing("other", "2026-01-01T00:00:00Z")) == RunQueue::Offer::Start);
  for (const char* t : {"a", "x", "b", "c"}) REQUIRE(q.offer(firing(t, "2026-01-01T00:00:01Z")) == RunQueue::Offer::Queued);
  const auto taken =
      q.take_along(JobKey{TableKey{"p", "lead"}}, [](const Firing& f) { return f.table.table != "x"; }, 2);
  REQUIRE(taken.size() == 2);  // the limit
  CHECK(taken[0].table.table == "a");
  CHECK(taken[1].table.table == "b");
  CHECK(q.running() == 4);
  CHECK(q.busy() == 2);
  CHECK(q.waiting() == 2);
  CHECK(q.offer(firing("a", "2026-01-01T00:00:02Z")) == RunQueue::Offer::Overrun);  // running, in the batch
  // The batch's runs end one by one; its worker is free only after the last.
  CHECK_FALSE(q.finished(TableKey{"p", "lead"}));
  CHECK_FALSE(q.finished(TableKey{"p", "a"}));
  CHECK(q.busy() == 2);
  // b goes back to wait: its worker is now free, and the oldest waiting
  // firing, x, takes it; b keeps its place by the time it was due.
  const auto next = q.wait_again(firing("b", "2026-01-01T00:00:01Z"));
  REQUIRE(next);
  CHECK(next->table.table == "x");
  CHECK(q.busy() == 2);
  CHECK(q.waiting() == 2);
  const auto after_x = q.finished(TableKey{"p", "x"});
  REQUIRE(after_x);
  CHECK(after_x->table.table == "c");  // arrived before b went back
  const auto after_c = q.finished(TableKey{"p", "c"});
  REQUIRE(after_c);
  CHECK(after_c->table.table == "b");
  CHECK(after_c->alone);  // never taken along again
  CHECK_FALSE(q.finished(TableKey{"p", "b"}));
  CHECK_FALSE(q.finished(TableKey{"p", "other"}));
  CHECK(q.running() == 0);
  CHECK(q.busy() == 0);
}

}  // namespace tidemark
