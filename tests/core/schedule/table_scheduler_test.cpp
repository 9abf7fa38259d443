// The scheduler's decisions in simulated time: DST days, overruns, retries
// and their backoff, permanent failures, catch-up after downtime, reloads
// mid-run, stopping with runs in flight and a full worker pool. The clock
// only moves when a test moves it; nothing sleeps.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "fake_scheduler_ports.h"
#include "schedule_test_config.h"

namespace tidemark {
namespace {

using testing::at;
using testing::config_of_pipeline;

struct TableLine {
  std::string name;
  std::string schedule;
};

// One pipeline `p` in `zone` with a table per line, each on its own schedule.
std::shared_ptr<const Config> config_of(const std::vector<TableLine>& tables, const std::string& zone = "UTC") {
  std::string text = "pipeline: p\nsource: w\ntarget: w\ntimezone: " + zone + "\ntables:\n";
  for (const TableLine& t : tables) {
    text += "  - { name: " + t.name + ", source_table: s." + t.name + ", target_table: r." + t.name +
            ", key: [id], cursor: id, schedule: \"" + t.schedule + "\" }\n";
  }
  return std::make_shared<const Config>(config_of_pipeline(text));
}

// When each run of `table` was due, as text, and with which trigger.
std::vector<std::string> launches_of(const FakeLauncher& launcher, const std::string& table) {
  std::vector<std::string> out;
  for (const RunOrder& o : launcher.launched) {
    if (o.firing.table.table == table) {
      out.push_back(format_instant(o.firing.scheduled) + " " + std::string(run_trigger_name(o.firing.trigger)));
    }
  }
  return out;
}

}  // namespace

TEST_CASE("a daylight-saving day fires as cronie does, in simulated time") {
  // Expected instants follow from the zone rules: Europe/Berlin springs
  // from 02:00 CET to 03:00 CEST on 2026-03-29 and falls back from 03:00
  // CEST to 02:00 CET on 2026-10-25; America/New_York springs on
  // 2026-03-08 (02:00 EST to 03:00 EDT) and falls back on 2026-11-01.
  struct Row {
    const char* what;
    const char* zone;
    const char* schedule;
    const char* from;
    const char* to;
    std::vector<std::string> firings;
  };
  const Row rows[] = {
      {"fixed hour in the spring gap: once, at the end of the gap", "Europe/Berlin", "30 2 * * *",
       "2026-03-28T00:00:00Z", "2026-03-31T00:00:00Z",
       {"2026-03-28T01:30:00Z", "2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"}},
      {"hourly across the spring gap: once in each real hour", "Europe/Berlin", "30 * * * *",
       "2026-03-28T23:00:00Z", "2026-03-29T03:00:00Z",
       {"2026-03-28T23:30:00Z", "2026-03-29T00:30:00Z", "2026-03-29T01:30:00Z", "2026-03-29T02:30:00Z"}},
      {"fixed hour in the repeated hour: once, at its first occurrence", "Europe/Berlin", "30 2 * * *",
       "2026-10-24T00:00:00Z", "2026-10-27T00:00:00Z",
       {"2026-10-24T00:30:00Z", "2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"}},
      {"hourly across the fall-back: the repeated hour fires again", "Europe/Berlin", "30 * * * *",
       "2026-10-24T22:00:00Z", "2026-10-25T03:00:00Z",
       {"2026-10-24T22:30:00Z", "2026-10-24T23:30:00Z", "2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z",
        "2026-10-25T02:30:00Z"}},
      {"New York, 02:00 does not exist on the spring day", "America/New_York", "0 2 * * *", "2026-03-07T00:00:00Z",
       "2026-03-10T00:00:00Z", {"2026-03-07T07:00:00Z", "2026-03-08T07:00:00Z", "2026-03-09T06:00:00Z"}},
      {"New York, 01:30 happens twice on the fall-back day", "America/New_York", "30 1 * * *",
       "2026-10-31T00:00:00Z", "2026-11-03T00:00:00Z",
       {"2026-10-31T05:30:00Z", "2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"}},
  };
  for (const Row& row : rows) {
    CAPTURE(row.what);
    SimulatedScheduler sim(4, at(row.from));
    sim.scheduler.start(config_of({{"t", row.schedule}}, row.zone), {});
    // Each run takes a minute and succeeds.
    while (sim.alarm.at && *sim.alarm.at < at(row.to)) {
      sim.advance_to(*sim.alarm.at);
      sim.advance_to(sim.clock.now() + std::chrono::minutes(1));
      if (!sim.launcher.running.empty()) sim.finish("t", RunStatus::Success);
    }
    std::vector<std::string> expected;
    for (const std::string& f : row.firings) expected.push_back(f + " schedule");
    CHECK(launches_of(sim.launcher, "t") == expected);
  }
}

TEST_CASE("a firing while the table's run is still going is skipped and counted, not stacked") {
  SimulatedScheduler sim(4, at("2026-01-01T10:00:30Z"));
  sim.scheduler.start(config_of({{"t", "* * * * *"}}), {});
  sim.advance_to(at("2026-01-01T10:03:10Z"));  // the 10:01 run is still going at 10:02 and 10:03
  CHECK(launches_of(sim.launcher, "t") == std::vector<std::string>{"2026-01-01T10:01:00Z schedule"});
  REQUIRE(sim.events.overruns.size() == 2);
  CHECK(sim.events.overruns[0].second == at("2026-01-01T10:02:00Z"));
  CHECK(sim.events.overruns[1].second == at("2026-01-01T10:03:00Z"));
  sim.finish("t", RunStatus::Success);
  sim.advance_to(at("2026-01-01T10:04:00Z"));  // the next firing after the run ended starts
  CHECK(launches_of(sim.launcher, "t").back() == "2026-01-01T10:04:00Z schedule");
  CHECK(sim.events.overruns.size() == 2);
}

TEST_CASE("a loop woken hours late fires each table once, then resumes its schedule") {
  SimulatedScheduler sim(4, at("2026-01-01T10:00:30Z"));
  sim.scheduler.start(config_of({{"t", "* * * * *"}}), {});
  sim.clock.set(at("2026-01-01T13:00:30Z"));  // suspended, or the clock jumped
  sim.scheduler.wake();
  CHECK(launches_of(sim.launcher, "t") == std::vector<std::string>{"2026-01-01T10:01:00Z schedule"});
  CHECK(sim.alarm.at == at("2026-01-01T13:01:00Z"));
}

TEST_CASE("transient failures are retried with a doubling backoff that a success resets") {
  // Hourly table; each row ends the run in flight at `ended` with
  // `outcome`; the next run must be due at `next` with that trigger.
  struct Row {
    const char* ended;
    RunStatus outcome;
    const char* next;
  };
  const Row rows[] = {
      {"2026-01-01T10:00:05Z", RunStatus::Failed, "2026-01-01T10:00:15Z retry"},   // 10 s after the 1st failure
      {"2026-01-01T10:00:20Z", RunStatus::Failed, "2026-01-01T10:00:40Z retry"},   // 20 s after the 2nd
      {"2026-01-01T10:00:41Z", RunStatus::Failed, "2026-01-01T10:01:21Z retry"},   // 40 s after the 3rd
      {"2026-01-01T10:01:30Z", RunStatus::Success, "2026-01-01T11:00:00Z schedule"},
      {"2026-01-01T11:00:10Z", RunStatus::Failed, "2026-01-01T11:00:20Z retry"},   // backoff starts over
      {"2026-01-01T11:00:30Z", RunStatus::Success, "2026-01-01T12:00:00Z schedule"},
  };
  SimulatedScheduler sim(4, at("2026-01-01T09:59:00Z"));
  sim.scheduler.start(config_of({{"t", "0 * * * *"}}), {});
  sim.advance_to(at("2026-01-01T10:00:00Z"));
  REQUIRE(sim.launcher.launched.size() == 1);
  for (const Row& row : rows) {
    CAPTURE(row.ended);
    sim.advance_to(at(row.ended));
    sim.finish("t", row.outcome);
    const std::string next = row.next;
    sim.advance_to(at(next.substr(0, next.find(' '))));
    CHECK(launches_of(sim.launcher, "t").back() == next);
    CHECK(sim.launcher.running.count("t") == 1);
  }
}

TEST_CASE("regression: a permanent failure counted toward the backoff of the next transient one") {
  SimulatedScheduler sim(4, at("2026-01-01T09:59:00Z"));
  sim.scheduler.start(config_of({{"t", "0 * * * *"}}), {});
  sim.advance_to(at("2026-01-01T10:00:05Z"));
  sim.finish("t", RunStatus::Failed, ErrorKind::Permanent);
  sim.advance_to(at("2026-01-01T11:00:05Z"));
  sim.finish("t", RunStatus::Failed, ErrorKind::Transient);
  REQUIRE(sim.events.retries.size() == 1);
  CHECK(sim.events.retries[0].second == at("2026-01-01T11:00:15Z"));  // the first transient failure: 10 s
}

TEST_CASE("a retry never comes after the table's next regular firing") {
  SimulatedScheduler sim(4, at("2026-01-01T10:00:30Z"));
  sim.scheduler.start(config_of({{"t", "* * * * *"}}), {});
  sim.advance_to(at("2026-01-01T10:01:00Z"));
  sim.advance_to(at("2026-01-01T10:01:55Z"));
  sim.finish("t", RunStatus::Failed);  // a retry 10 s later would be 10:02:05, after the 10:02 firing
  CHECK(sim.events.retries.empty());
  sim.advance_to(at("2026-01-01T10:02:30Z"));
  CHECK(launches_of(sim.launcher, "t") ==
        std::vector<std::string>{"2026-01-01T10:01:00Z schedule", "2026-01-01T10:02:00Z schedule"});
}

TEST_CASE("a permanent failure is not retried: the table waits for its next firing or a reload") {
  const auto config = config_of({{"t", "0 * * * *"}, {"u", "0 * * * *"}});
  SimulatedScheduler sim(4, at("2026-01-01T09:59:00Z"));
  sim.scheduler.start(config, {});
  sim.advance_to(at("2026-01-01T10:00:00Z"));
  sim.advance_to(at("2026-01-01T10:00:05Z"));
  sim.finish("t", RunStatus::Failed, ErrorKind::Permanent);
  sim.finish("u", RunStatus::Success);
  CHECK(sim.events.retries.empty());
  REQUIRE(sim.events.not_retried_until.size() == 1);
  CHECK(sim.events.not_retried_until[0].second == at("2026-01-01T11:00:00Z"));

  sim.advance_to(at("2026-01-01T10:59:59Z"));
  CHECK(launches_of(sim.launcher, "t").size() == 1);

  // The operator fixed the cause and reloads: one attempt now, for the
  // table that failed permanently only.
  sim.scheduler.reload(config_of({{"t", "0 * * * *"}, {"u", "0 * * * *"}}));
  sim.advance_to(at("2026-01-01T10:59:59Z"));
  CHECK(launches_of(sim.launcher, "t").back() == "2026-01-01T10:59:59Z retry");
  CHECK(launches_of(sim.launcher, "u").size() == 1);
  CHECK(sim.events.reload_retries == std::vector<std::string>{"t"});

  // It fails permanently again; a later reload retries it again, but one
  // after a success does not.
  sim.finish("t", RunStatus::Failed, ErrorKind::Permanent);
  sim.advance_to(at("2026-01-01T11:00:00Z"));
  CHECK(launches_of(sim.launcher, "t").back() == "2026-01-01T11:00:00Z schedule");
  sim.finish("t", RunStatus::Success);
  sim.scheduler.reload(config);
  sim.advance_to(at("2026-01-01T11:30:00Z"));
  CHECK(launches_of(sim.launcher, "t").size() == 3);
}

TEST_CASE("after downtime a table that missed firings runs once at start-up; one that never ran waits") {
  const Instant now = at("2026-01-03T10:30:00Z");
  const LastStarts last_starts{
      {{{"p", "missed"}, JobKind::Load}, at("2026-01-01T10:00:00Z")},  // 48 hourly firings missed
      {{{"p", "current"}, JobKind::Load}, at("2026-01-03T10:00:00Z")},  // its last firing ran
  };
  SimulatedScheduler sim(4, now);
  sim.scheduler.start(config_of({{"missed", "0 * * * *"}, {"current", "0 * * * *"}, {"fresh", "0 * * * *"}}),
                      last_starts);
  sim.advance_to(now);
  CHECK(launches_of(sim.launcher, "missed") == std::vector<std::string>{"2026-01-03T10:30:00Z startup"});
  CHECK(sim.events.caught_up == std::vector<std::string>{"missed"});
  sim.advance_to(at("2026-01-03T10:30:20Z"));
  sim.finish("missed", RunStatus::Success);
  sim.advance_to(at("2026-01-03T10:59:59Z"));
  CHECK(sim.launcher.launched.size() == 1);
  sim.advance_to(at("2026-01-03T11:00:00Z"));
  for (const char* table : {"missed", "current", "fresh"}) {
    CAPTURE(table);
    CHECK(launches_of(sim.launcher, table).back() == "2026-01-03T11:00:00Z schedule");
  }
  CHECK(sim.launcher.launched.size() == 4);
}

TEST_CASE("a reload mid-run: new, removed and changed tables; the run in flight keeps its configuration") {
  const auto v1 = config_of({{"a", "0 * * * *"}, {"b", "0 * * * *"}});
  SimulatedScheduler sim(1, at("2026-01-01T09:59:00Z"));
  sim.scheduler.start(v1, {});
  sim.advance_to(at("2026-01-01T10:00:00Z"));
  REQUIRE(sim.launcher.running.count("a") == 1);  // one worker: b waits
  CHECK(sim.scheduler.waiting() == 1);

  // a moves to half past, b goes (its waiting firing with it), c comes.
  const auto v2 = config_of({{"a", "30 * * * *"}, {"c", "15 * * * *"}});
  sim.advance_to(at("2026-01-01T10:10:00Z"));
  sim.scheduler.reload(v2);
  CHECK(sim.scheduler.waiting() == 0);
  CHECK(sim.events.queue_lengths.back() == 0);
  const RunOrder& in_flight = sim.launcher.running.at("a");
  CHECK(in_flight.config == v1);
  CHECK(in_flight.table->schedule->expression() == "0 * * * *");

  sim.advance_to(at("2026-01-01T10:15:00Z"));  // c fires and waits for the worker a holds
  CHECK(sim.scheduler.waiting() == 1);
  sim.advance_to(at("2026-01-01T10:20:00Z"));
  sim.finish("a", RunStatus::Success);
  REQUIRE(sim.launcher.running.count("c") == 1);
  CHECK(sim.launcher.running.at("c").config == v2);
  CHECK(launches_of(sim.launcher, "c") == std::vector<std::string>{"2026-01-01T10:15:00Z schedule"});
  sim.finish("c", RunStatus::Success);

  sim.advance_to(at("2026-01-01T10:30:00Z"));  // a on its new schedule
  CHECK(launches_of(sim.launcher, "a").back() == "2026-01-01T10:30:00Z schedule");
  CHECK(sim.launcher.running.at("a").config == v2);

  // a is removed while it runs: it finishes, frees its worker, and a
  // failure is not retried for a table that is gone.
  sim.scheduler.reload(config_of({{"c", "15 * * * *"}}));
  sim.finish("a", RunStatus::Failed);
  CHECK(sim.events.retries.empty());
  CHECK(sim.scheduler.in_flight() == 0);
  sim.advance_to(at("2026-01-01T12:00:00Z"));
  CHECK(launches_of(sim.launcher, "a").size() == 2);
  CHECK(launches_of(sim.launcher, "b").empty());
  CHECK(launches_of(sim.launcher, "c") ==
        std::vector<std::string>{"2026-01-01T10:15:00Z schedule", "2026-01-01T11:15:00Z schedule"});
}

TEST_CASE("stop: waiting firings are dropped, runs in flight get the grace period, then are cancelled") {
  const auto config = config_of({{"a", "0 * * * *"}, {"b", "0 * * * *"}, {"c", "0 * * * *"}});

  SUBCASE("runs that end after cancellation") {
    SimulatedScheduler sim(2, at("2026-01-01T09:59:00Z"));
    sim.scheduler.start(config, {});
    sim.advance_to(at("2026-01-01T10:00:05Z"));
    REQUIRE(sim.launcher.running.size() == 2);
    int done = 0;
    sim.scheduler.stop(std::chrono::seconds(30), [&] { ++done; });
    CHECK(sim.events.dropped_on_stop == 1u);
    CHECK(sim.scheduler.waiting() == 0);
    sim.advance_to(at("2026-01-01T10:00:10Z"));
    sim.finish("a", RunStatus::Success);
    CHECK(sim.launcher.launched.size() == 2);  // the dropped firing never starts
    sim.advance_to(at("2026-01-01T10:00:34Z"));
    CHECK(sim.launcher.cancel_requests == 0);
    sim.advance_to(at("2026-01-01T10:00:35Z"));
    CHECK(sim.launcher.cancel_requests == 1);
    CHECK(sim.events.cancelled_at_grace == 1u);
    CHECK(done == 0);
    sim.finish("b", RunStatus::Cancelled);
    CHECK(done == 1);
    CHECK_FALSE(sim.alarm.rings_at());
    sim.advance_to(at("2026-01-01T12:00:00Z"));
    CHECK(sim.launcher.launched.size() == 2);
    CHECK(sim.events.retries.empty());
  }
  SUBCASE("a run that never ends is left behind") {
    SimulatedScheduler sim(2, at("2026-01-01T09:59:00Z"));
    sim.scheduler.start(config, {});
    sim.advance_to(at("2026-01-01T10:00:05Z"));
    int done = 0;
    sim.scheduler.stop(std::chrono::seconds(30), [&] { ++done; });
    sim.finish("a", RunStatus::Failed);  // a failure while stopping is not retried
    sim.advance_to(at("2026-01-01T10:00:44Z"));
    CHECK(done == 0);
    sim.advance_to(at("2026-01-01T10:00:45Z"));  // grace + TableScheduler::kAbandonAfter
    CHECK(done == 1);
    CHECK(sim.events.left_behind == 1u);
    CHECK(sim.events.retries.empty());
  }
  SUBCASE("regression: a wall clock stepped back during the grace period stretched it") {
    SimulatedScheduler sim(2, at("2026-01-01T09:59:00Z"));
    sim.scheduler.start(config, {});
    sim.advance_to(at("2026-01-01T10:00:05Z"));
    sim.scheduler.stop(std::chrono::seconds(30), [] {});
    sim.clock.step_wall(at("2026-01-01T09:00:05Z"));  // NTP steps the wall clock back an hour
    sim.advance_to(at("2026-01-01T09:00:34Z"));
    CHECK(sim.launcher.cancel_requests == 0);
    sim.advance_to(at("2026-01-01T09:00:35Z"));  // 30 s of real time later
    CHECK(sim.launcher.cancel_requests == 1);
  }
  SUBCASE("nothing in flight: done at once") {
    SimulatedScheduler sim(2, at("2026-01-01T09:00:00Z"));
    sim.scheduler.start(config, {});
    int done = 0;
    sim.scheduler.stop(std::chrono::seconds(30), [&] { ++done; });
    CHECK(done == 1);
    CHECK_FALSE(sim.alarm.rings_at());
  }
}

TEST_CASE("a full worker pool queues firings and starts them oldest first") {
  // a and b take both workers at 10:00:00; d fires at 10:00:10 and c at
  // 10:00:20, so d (older) starts first although c sorts first by name.
  SimulatedScheduler sim(2, at("2026-01-01T09:59:00Z"));
  sim.scheduler.start(config_of({{"a", "0 0 10 * * *"},
                                 {"b", "0 0 10 * * *"},
                                 {"c", "20 0 10 * * *"},
                                 {"d", "10 0 10 * * *"}}),
                      {});
  sim.advance_to(at("2026-01-01T10:00:25Z"));
  CHECK(sim.launcher.running.size() == 2);
  CHECK(sim.scheduler.waiting() == 2);
  sim.advance_to(at("2026-01-01T10:00:30Z"));
  sim.finish("a", RunStatus::Success);
  CHECK(launches_of(sim.launcher, "d") == std::vector<std::string>{"2026-01-01T10:00:10Z schedule"});
  // c waits for a load of the same pipeline: it goes along on d's worker,
  // keeping the time it was due, so the metrics see how long it waited.
  CHECK(launches_of(sim.launcher, "c") == std::vector<std::string>{"2026-01-01T10:00:20Z schedule"});
  CHECK(sim.launcher.batches == std::vector<std::size_t>{2});
  CHECK(sim.events.queue_lengths == std::vector<std::size_t>{1, 2, 1, 0});
  CHECK(sim.launcher.most_running == 3);  // on two workers
  sim.finish("b", RunStatus::Success);
  sim.finish("d", RunStatus::Success);
  sim.finish("c", RunStatus::Success);
  CHECK(sim.scheduler.in_flight() == 0);
  CHECK(sim.events.overruns.empty());
}

TEST_CASE("a batch takes the waiting loads of its own pipeline; one it hands back waits for a worker of its own") {
  const auto daemon = parse_daemon_config({"t.yaml", "state: w\nconnections: { w: { dsn: x } }\n"});
  const auto pipeline = [](const std::string& name, const std::vector<std::string>& tables) {
    std::string text = "pipeline: " + name + "\nsource: w\ntarget: w\nschedule: \"0 0 10 * * *\"\ntables:\n";
    for (const std::string& t : tables) {
      text += "  - { name: " + t + ", source_table: s." + t + ", target_table: " + name + "." + t +
              ", key: [id], cursor: id }\n";
    }
    return ConfigText{name + ".yaml", text};
  };
  auto parsed = parse_config(*daemon.value, {pipeline("p", {"a", "b", "c"}), pipeline("q", {"x"})});
  REQUIRE(parsed.value);
  SimulatedScheduler sim(1, at("2026-01-01T09:59:00Z"));
  sim.scheduler.start(std::make_shared<const Config>(std::move(*parsed.value)), {});
  sim.advance_to(at("2026-01-01T10:00:00Z"));
  REQUIRE(sim.launcher.launched.size() == 1);  // the one worker: the others wait
  const std::string first = sim.launcher.launched[0].firing.table.table;
  CHECK(sim.scheduler.waiting() == 3);
  sim.finish(first, RunStatus::Success);
  // The next firing takes the other waiting load of its pipeline along,
  // not q's.
  REQUIRE(sim.launcher.batches == std::vector<std::size_t>{2});
  CHECK(sim.launcher.running.size() == 2);
  CHECK(sim.launcher.running.count("x") == 0);
  CHECK(sim.scheduler.waiting() == 1);
  std::vector<std::string> in_batch;
  for (const auto& [table, order] : sim.launcher.running) in_batch.push_back(table);
  // The first finishes in the batch; the second is handed back and waits,
  // in its place by the time it was due: behind x, which arrived first.
  sim.finish(in_batch[0], RunStatus::Success);
  CHECK(sim.scheduler.in_flight() == 1);
  sim.send_alone(in_batch[1]);
  REQUIRE(sim.launcher.running.size() == 1);
  CHECK(sim.launcher.running.count("x") == 1);
  CHECK(sim.scheduler.waiting() == 1);
  sim.finish("x", RunStatus::Success);
  // Alone now, on its own worker, as due at 10:00:00.
  REQUIRE(sim.launcher.running.count(in_batch[1]) == 1);
  CHECK(sim.launcher.running.at(in_batch[1]).firing.alone);
  CHECK(launches_of(sim.launcher, in_batch[1]) ==
        std::vector<std::string>{"2026-01-01T10:00:00Z schedule", "2026-01-01T10:00:00Z schedule"});
  CHECK(sim.launcher.batches.size() == 1);
  sim.finish(in_batch[1], RunStatus::Success);
  CHECK(sim.scheduler.in_flight() == 0);
  CHECK(sim.scheduler.waiting() == 0);
}

TEST_CASE("a batch's run handed back after a reload removed its table is dropped, not run") {
  SimulatedScheduler sim(1, at("2026-01-01T09:59:00Z"));
  sim.scheduler.start(config_of({{"a", "0 0 10 * * *"}, {"b", "0 0 10 * * *"}, {"c", "0 0 10 * * *"}}), {});
  sim.advance_to(at("2026-01-01T10:00:00Z"));
  sim.finish(sim.launcher.launched[0].firing.table.table, RunStatus::Success);
  REQUIRE(sim.launcher.batches == std::vector<std::size_t>{2});
  std::vector<std::string> in_batch;
  for (const auto& [table, order] : sim.launcher.running) in_batch.push_back(table);
  std::vector<TableLine> kept;
  for (const char* t : {"a", "b", "c"}) {
    if (t != in_batch[0]) kept.push_back({t, "0 0 10 * * *"});
  }
  sim.scheduler.reload(config_of(kept));
  sim.send_alone(in_batch[0]);
  CHECK(sim.launcher.launched.size() == 3);  // not started again
  CHECK(sim.scheduler.waiting() == 0);
  sim.finish(in_batch[1], RunStatus::Success);
  CHECK(sim.scheduler.in_flight() == 0);
}

TEST_CASE("a batch's run handed back while stopping is dropped, not run") {
  SimulatedScheduler sim(1, at("2026-01-01T09:59:00Z"));
  sim.scheduler.start(config_of({{"a", "0 0 10 * * *"}, {"b", "0 0 10 * * *"}, {"c", "0 0 10 * * *"}}), {});
  sim.advance_to(at("2026-01-01T10:00:00Z"));
  sim.finish(sim.launcher.launched[0].firing.table.table, RunStatus::Success);
  REQUIRE(sim.launcher.batches == std::vector<std::size_t>{2});
  int done = 0;
  sim.scheduler.stop(std::chrono::seconds(30), [&] { ++done; });
  std::vector<std::string> in_batch;
  for (const auto& [table, order] : sim.launcher.running) in_batch.push_back(table);
  sim.send_alone(in_batch[0]);
  CHECK(done == 0);
  CHECK(sim.launcher.launched.size() == 3);  // nothing started again
  sim.finish(in_batch[1], RunStatus::Success);
  CHECK(done == 1);
  CHECK(sim.scheduler.in_flight() == 0);
}

}  // namespace tidemark

namespace tidemark {
namespace {

// A table `t` loaded every 10 minutes and reconciled daily at 03:00.
std::shared_ptr<const Config> reconciled_config(const std::string& reconcile = "0 3 * * *") {
  const std::string text =
      "pipeline: p\nsource: w\ntarget: w\ntables:\n"
      "  - { name: t, source_table: s.t, target_table: r.t, key: [id], cursor: id, schedule: \"*/10 * * * *\",\n"
      "      deletes: { reconcile: \"" + reconcile + "\" } }\n"
      "  - { name: u, source_table: s.u, target_table: r.u, key: [id], cursor: id, schedule: \"*/10 * * * *\" }\n";
  return std::make_shared<const Config>(config_of_pipeline(text));
}

std::vector<std::string> reconciles_of(const FakeLauncher& launcher, const std::string& table) {
  std::vector<std::string> out;
  for (const RunOrder& o : launcher.launched) {
    if (o.firing.table.table == table && o.firing.kind == JobKind::Reconcile) {
      out.push_back(format_instant(o.firing.scheduled) + " " + std::string(run_trigger_name(o.firing.trigger)));
    }
  }
  return out;
}

}  // namespace

TEST_CASE("a table with deletes: is reconciled on its own schedule, beside its loads, on the same workers") {
  SimulatedScheduler sim(4, at("2026-01-01T02:55:30Z"));
  sim.scheduler.start(reconciled_config(), {});
  sim.advance_to(at("2026-01-01T03:00:10Z"));
  // The load and the reconcile are jobs of their own: both fired at 03:00.
  CHECK(reconciles_of(sim.launcher, "t") == std::vector<std::string>{"2026-01-01T03:00:00Z schedule"});
  CHECK(reconciles_of(sim.launcher, "u").empty());  // no deletes: no reconcile
  CHECK(sim.launcher.running.count("t") == 1);
  CHECK(sim.launcher.running.count("t reconcile") == 1);
  CHECK(sim.scheduler.in_flight() == 3);
  sim.finish("t reconcile", RunStatus::Success);
  sim.finish("t", RunStatus::Success);
  sim.finish("u", RunStatus::Success);
  sim.advance_to(at("2026-01-02T03:00:10Z"));
  CHECK(reconciles_of(sim.launcher, "t") ==
        std::vector<std::string>{"2026-01-01T03:00:00Z schedule", "2026-01-02T03:00:00Z schedule"});
  CHECK(sim.events.overruns.empty() == false);  // the loads nobody finished since
}

TEST_CASE("a reconcile that finds the table's lock held by a load comes back after the backoff") {
  SimulatedScheduler sim(4, at("2026-01-01T02:59:30Z"));
  sim.scheduler.start(reconciled_config(), {});
  sim.advance_to(at("2026-01-01T03:00:00Z"));
  sim.finish("t reconcile", RunStatus::SkippedLocked);
  sim.advance_to(at("2026-01-01T03:00:30Z"));
  CHECK(reconciles_of(sim.launcher, "t") ==
        std::vector<std::string>{"2026-01-01T03:00:00Z schedule", "2026-01-01T03:00:10Z retry"});
  // A load skipped as locked is not retried: the next firing runs it.
  sim.finish("t", RunStatus::SkippedLocked);
  CHECK(sim.events.retries.size() == 1);
}

TEST_CASE("after downtime a missed reconcile runs once at start-up, on its own schedule, apart from the load") {
  const Instant now = at("2026-01-03T10:05:00Z");
  const LastStarts last_starts{
      {{{"p", "t"}, JobKind::Load}, at("2026-01-03T10:00:00Z")},       // its last load firing ran
      {{{"p", "t"}, JobKind::Reconcile}, at("2026-01-01T03:00:00Z")},  // the reconciles of the 2nd and 3rd missed
      {{{"p", "u"}, JobKind::Load}, at("2026-01-03T09:00:00Z")},       // five load firings missed
  };
  SimulatedScheduler sim(4, now);
  sim.scheduler.start(reconciled_config(), last_starts);
  sim.advance_to(now);
  CHECK(reconciles_of(sim.launcher, "t") == std::vector<std::string>{"2026-01-03T10:05:00Z startup"});
  CHECK(sim.launcher.running.count("t") == 0);  // the load waits for 10:10
  CHECK(launches_of(sim.launcher, "u") == std::vector<std::string>{"2026-01-03T10:05:00Z startup"});
  sim.finish("t reconcile", RunStatus::Success);
  sim.finish("u", RunStatus::Success);
  // Once caught up, the reconcile keeps its own schedule: next at 03:00.
  sim.advance_to(at("2026-01-04T02:59:00Z"));
  CHECK(reconciles_of(sim.launcher, "t").size() == 1);
  sim.advance_to(at("2026-01-04T03:00:10Z"));
  CHECK(reconciles_of(sim.launcher, "t").back() == "2026-01-04T03:00:00Z schedule");

  // A reconcile that ran at its last firing does not run again at start.
  SimulatedScheduler current(4, at("2026-01-03T10:05:00Z"));
  current.scheduler.start(reconciled_config(), {{{{"p", "t"}, JobKind::Reconcile}, at("2026-01-03T03:00:00Z")}});
  current.advance_to(at("2026-01-03T10:05:00Z"));
  CHECK(reconciles_of(current.launcher, "t").empty());
}

TEST_CASE("one worker: a reconcile waits behind the load like any firing; a reload without deletes drops it") {
  SimulatedScheduler sim(1, at("2026-01-01T02:59:30Z"));
  sim.scheduler.start(reconciled_config(), {});
  sim.advance_to(at("2026-01-01T03:00:00Z"));
  CHECK(sim.scheduler.in_flight() == 1);
  CHECK(sim.scheduler.waiting() == 2);  // u's load and t's reconcile
  CHECK(sim.launcher.most_running == 1);
  sim.scheduler.reload(config_of({{"t", "*/10 * * * *"}, {"u", "*/10 * * * *"}}));
  CHECK(sim.scheduler.waiting() == 1);  // the reconcile's firing went with its deletes:
  sim.advance_to(at("2026-01-02T04:00:00Z"));
  CHECK(reconciles_of(sim.launcher, "t").empty());
}

TEST_CASE("a changed reconcile schedule is re-armed on reload") {
  SimulatedScheduler sim(4, at("2026-01-01T02:00:30Z"));
  sim.scheduler.start(reconciled_config("0 3 * * *"), {});
  sim.scheduler.reload(reconciled_config("30 2 * * *"));
  sim.advance_to(at("2026-01-01T02:31:00Z"));
  CHECK(reconciles_of(sim.launcher, "t") == std::vector<std::string>{"2026-01-01T02:30:00Z schedule"});
}

}  // namespace tidemark

namespace tidemark {
namespace {

using Steady = FleetView::Steady;

// A view of "me" and "x" that holds until `until` on the monotonic clock.
FleetView me_and_x(Steady until) { return FleetView("me", {"me", "x"}, true, until); }

// The first `count` tables named t0, t1, ... that `member` owns among "me" and "x".
std::vector<std::string> owned_by(const std::string& member, int count) {
  std::vector<std::string> out;
  const FleetView view(member, {"me", "x"}, true, Steady::max());
  for (int i = 0; static_cast<int>(out.size()) < count; ++i) {
    if (view.picks({"p", "t" + std::to_string(i)})) out.push_back("t" + std::to_string(i));
  }
  return out;
}

std::vector<TableLine> hourly(const std::vector<std::string>& names) {
  std::vector<TableLine> out;
  for (const std::string& n : names) out.push_back({n, "0 * * * *"});
  return out;
}

}  // namespace

TEST_CASE("in a fleet a member fires only the tables its view gives it, and no overrun is counted for the rest") {
  const auto mine = owned_by("me", 2);
  const auto theirs = owned_by("x", 2);
  SimulatedScheduler sim(4, at("2026-01-01T10:30:00Z"));
  sim.scheduler.start(config_of(hourly({mine[0], mine[1], theirs[0], theirs[1]})), {}, FleetView::none());
  sim.scheduler.assign(me_and_x(Steady::max()), LastStarts{});
  CHECK(sim.events.owned == 2);
  sim.advance_to(at("2026-01-01T11:00:00Z"));
  CHECK(launches_of(sim.launcher, mine[0]) == std::vector<std::string>{"2026-01-01T11:00:00Z schedule"});
  CHECK(launches_of(sim.launcher, mine[1]) == std::vector<std::string>{"2026-01-01T11:00:00Z schedule"});
  CHECK(sim.launcher.launched.size() == 2);
  CHECK(sim.events.overruns.empty());
}

TEST_CASE("a member that gains a table runs it once at once only when its old owner missed a firing") {
  const auto theirs = owned_by("x", 3);
  const Instant now = at("2026-01-01T10:30:00Z");
  SimulatedScheduler sim(4, now);
  sim.scheduler.start(config_of(hourly(theirs)), {}, FleetView::none());
  sim.scheduler.assign(me_and_x(Steady::max()), LastStarts{});
  CHECK(sim.events.owned == 0);
  // x left: the first ran its 10:00 firing, the second last ran at 09:00,
  // the third never ran.
  const LastStarts last_starts{{{{"p", theirs[0]}, JobKind::Load}, at("2026-01-01T10:00:02Z")},
                               {{{"p", theirs[1]}, JobKind::Load}, at("2026-01-01T09:00:01Z")}};
  sim.scheduler.assign(FleetView("me", {"me"}, true, Steady::max()), last_starts);
  sim.advance_to(now);
  CHECK(sim.events.owned == 3);
  CHECK(sim.events.gained == 3);
  CHECK(launches_of(sim.launcher, theirs[1]) == std::vector<std::string>{"2026-01-01T10:30:00Z takeover"});
  CHECK(sim.launcher.launched.size() == 1);
  sim.finish(theirs[1], RunStatus::Success);
  sim.advance_to(at("2026-01-01T11:00:00Z"));
  CHECK(sim.launcher.launched.size() == 4);
}

TEST_CASE("a member's first settled view catches up what it missed while down, as start-up") {
  const auto mine = owned_by("me", 1);
  const Instant now = at("2026-01-01T10:30:00Z");
  SimulatedScheduler sim(4, now);
  sim.scheduler.start(config_of(hourly(mine)), {}, FleetView::none());
  const LastStarts last_starts{{{{"p", mine[0]}, JobKind::Load}, at("2026-01-01T08:00:00Z")}};
  // Not seen by x yet: nothing owned, nothing caught up.
  sim.scheduler.assign(FleetView("me", {"me", "x"}, false, Steady::max()), last_starts);
  sim.advance_to(at("2026-01-01T10:30:02Z"));
  CHECK(sim.launcher.launched.empty());
  sim.scheduler.assign(me_and_x(Steady::max()), last_starts);
  sim.advance_to(at("2026-01-01T10:30:02Z"));
  CHECK(launches_of(sim.launcher, mine[0]) == std::vector<std::string>{"2026-01-01T10:30:02Z startup"});
}

TEST_CASE("a member holds its views until the pauses are read: a paused table does not catch up at start") {
  const auto mine = owned_by("me", 2);
  const Instant now = at("2026-01-01T10:30:00Z");
  SimulatedScheduler sim(4, now);
  sim.scheduler.start(config_of(hourly(mine)), {}, FleetView::none(), /*pauses_known=*/false);
  const LastStarts last_starts{{{{"p", mine[0]}, JobKind::Load}, at("2026-01-01T08:00:00Z")},
                               {{{"p", mine[1]}, JobKind::Load}, at("2026-01-01T08:00:00Z")}};
  sim.scheduler.assign(me_and_x(Steady::max()), last_starts);
  sim.scheduler.assign(me_and_x(Steady::max()), std::nullopt);  // a renewal: the last starts read before stand
  sim.advance_to(at("2026-01-01T10:30:02Z"));
  CHECK(sim.launcher.launched.empty());
  CHECK(sim.events.owned == 0);
  std::vector<Pause> pauses(1);
  pauses[0].pipeline = "p";
  pauses[0].table = mine[0];
  sim.scheduler.set_pauses(PauseSet(pauses), {});
  sim.advance_to(at("2026-01-01T10:30:03Z"));
  CHECK(sim.events.owned == 2);
  CHECK(launches_of(sim.launcher, mine[0]).empty());
  CHECK(launches_of(sim.launcher, mine[1]) == std::vector<std::string>{"2026-01-01T10:30:02Z startup"});
}

TEST_CASE("regression: a never-run table's first firing during the member's join wait runs once the view settles") {
  // A daemon started seconds before a firing waits one lease before it
  // owns anything. The firing used to be dropped for a table that never
  // ran (no last start to say one was missed): a daily table then waited a
  // day. Only the run rows can tell whether another member ran it
  // meanwhile, so without them, or for a table a reload added after they
  // were asked for, it is not run; nor is a table the view gives to x.
  const auto mine = owned_by("me", 4);
  const auto theirs = owned_by("x", 1);
  struct Row {
    const char* what;
    bool read;                // the settling view came with last starts
    bool ran_elsewhere;       // they show a run of mine[1] since the firing
    std::vector<std::string> run;  // of mine[0], mine[1], theirs[0]
  };
  const Row rows[] = {
      {"never ran anywhere: runs", true, false, {mine[0], mine[1]}},
      {"another member ran it: not again", true, true, {mine[0]}},
      {"the last starts could not be read: nothing is run twice", false, false, {}},
  };
  for (const Row& row : rows) {
    CAPTURE(row.what);
    SimulatedScheduler sim(4, at("2026-01-01T10:59:57Z"));
    sim.scheduler.start(config_of(hourly({mine[0], mine[1], theirs[0]})), {}, FleetView::none());
    sim.scheduler.assign(FleetView("me", {"me", "x"}, false, Steady::max()), std::nullopt);
    sim.advance_to(at("2026-01-01T11:00:05Z"));
    CHECK(sim.launcher.launched.empty());
    LastStarts last_starts;
    if (row.ran_elsewhere) last_starts[{{"p", mine[1]}, JobKind::Load}] = at("2026-01-01T11:00:00Z");
    sim.scheduler.assign(me_and_x(Steady::max()),
                         row.read ? std::optional<LastStarts>(last_starts) : std::nullopt);
    sim.advance_to(at("2026-01-01T11:00:05Z"));
    std::vector<std::string> run;
    for (const std::string& t : {mine[0], mine[1], theirs[0]}) {
      const auto launches = launches_of(sim.launcher, t);
      if (!launches.empty()) {
        CHECK(launches == std::vector<std::string>{"2026-01-01T11:00:05Z startup"});
        run.push_back(t);
      }
    }
    CHECK(run == row.run);
    CHECK(sim.events.lapses == 0);
  }
}

TEST_CASE("regression: a table a reload adds while the member joins is not caught up on last starts that did not ask for it") {
  const auto mine = owned_by("me", 2);
  SimulatedScheduler sim(4, at("2026-01-01T10:59:57Z"));
  sim.scheduler.start(config_of(hourly({mine[0]})), {}, FleetView::none());
  sim.scheduler.assign(FleetView("me", {"me", "x"}, false, Steady::max()), std::nullopt);
  sim.scheduler.reload(config_of(hourly({mine[0], mine[1]})));
  sim.advance_to(at("2026-01-01T11:00:05Z"));
  // The last starts were read for the configuration before the reload.
  sim.scheduler.assign(me_and_x(Steady::max()), LastStarts{});
  sim.advance_to(at("2026-01-01T11:00:05Z"));
  CHECK(launches_of(sim.launcher, mine[0]) == std::vector<std::string>{"2026-01-01T11:00:05Z startup"});
  CHECK(launches_of(sim.launcher, mine[1]).empty());
  sim.advance_to(at("2026-01-01T12:00:00Z"));
  CHECK(launches_of(sim.launcher, mine[1]) == std::vector<std::string>{"2026-01-01T12:00:00Z schedule"});
}

TEST_CASE("a member whose lease lapsed by its own clock fires nothing, then catches up once it renews") {
  const auto mine = owned_by("me", 2);
  SimulatedScheduler sim(4, at("2026-01-01T10:59:50Z"));
  sim.scheduler.start(config_of({{mine[0], "0 * * * *"}, {mine[1], "30 * * * *"}}), {}, FleetView::none());
  const Steady start = sim.clock.monotonic();
  sim.scheduler.assign(me_and_x(start + Steady(std::chrono::seconds(5))), LastStarts{});
  // Renewals stop coming back (the state database is unreachable).
  sim.advance_to(at("2026-01-01T11:00:00Z"));
  CHECK(sim.launcher.launched.empty());
  CHECK(sim.events.lapses == 1);
  sim.advance_to(at("2026-01-01T11:00:20Z"));
  // A renewal at last: the same fleet, the skipped firing runs now; the
  // table that skipped nothing waits for its own.
  // regression: the last starts read with it name neither table (neither
  // ever ran); the skipped firing still runs.
  sim.scheduler.assign(me_and_x(sim.clock.monotonic() + Steady(std::chrono::seconds(5))), LastStarts{});
  sim.advance_to(at("2026-01-01T11:00:20Z"));
  CHECK(launches_of(sim.launcher, mine[0]) == std::vector<std::string>{"2026-01-01T11:00:20Z takeover"});
  CHECK(launches_of(sim.launcher, mine[1]).empty());
}

TEST_CASE("regression: a firing skipped while the lease lapsed is caught up after the member joins again") {
  // The database ended the lease meanwhile: the member owns nothing, joins
  // again, waits unsettled, and only then owns the table again.
  const auto mine = owned_by("me", 1);
  SimulatedScheduler sim(4, at("2026-01-01T10:59:50Z"));
  sim.scheduler.start(config_of(hourly(mine)), {}, FleetView::none());
  sim.scheduler.assign(me_and_x(sim.clock.monotonic() + Steady(std::chrono::seconds(5))), LastStarts{});
  sim.advance_to(at("2026-01-01T11:00:00Z"));
  CHECK(sim.launcher.launched.empty());
  sim.scheduler.assign(FleetView::none(), std::nullopt);
  sim.scheduler.assign(FleetView("me", {"me", "x"}, false, Steady::max()), std::nullopt);
  sim.advance_to(at("2026-01-01T11:00:30Z"));
  CHECK(sim.launcher.launched.empty());
  sim.scheduler.assign(me_and_x(Steady::max()), LastStarts{});
  sim.advance_to(at("2026-01-01T11:00:30Z"));
  CHECK(launches_of(sim.launcher, mine[0]) == std::vector<std::string>{"2026-01-01T11:00:30Z takeover"});
}

TEST_CASE("a firing that waited for a worker does not start after the lease lapsed; it runs once renewed") {
  const auto mine = owned_by("me", 2);
  SimulatedScheduler sim(1, at("2026-01-01T10:59:50Z"));
  sim.scheduler.start(config_of(hourly(mine)), {}, FleetView::none());
  sim.scheduler.assign(me_and_x(sim.clock.monotonic() + Steady(std::chrono::seconds(15))), LastStarts{});
  sim.advance_to(at("2026-01-01T11:00:00Z"));
  REQUIRE(sim.launcher.launched.size() == 1);
  REQUIRE(sim.scheduler.waiting() == 1);
  const std::string first = sim.launcher.launched[0].firing.table.table;
  const std::string second = first == mine[0] ? mine[1] : mine[0];
  sim.advance_to(at("2026-01-01T11:00:10Z"));  // past the lease's local end
  sim.finish(first, RunStatus::Success);
  CHECK(sim.launcher.launched.size() == 1);
  CHECK(sim.scheduler.in_flight() == 0);
  CHECK(sim.scheduler.waiting() == 0);
  CHECK(sim.events.lapses == 1);
  sim.scheduler.assign(me_and_x(sim.clock.monotonic() + Steady(std::chrono::seconds(5))), LastStarts{});
  sim.advance_to(at("2026-01-01T11:00:10Z"));
  CHECK(launches_of(sim.launcher, second) == std::vector<std::string>{"2026-01-01T11:00:10Z takeover"});
}

TEST_CASE("a table lost while its firing waits for a worker is not started; one lost mid-run runs on") {
  const auto mine = owned_by("me", 3);
  SimulatedScheduler sim(1, at("2026-01-01T10:59:00Z"));
  sim.scheduler.start(config_of(hourly(mine)), {}, FleetView::none());
  sim.scheduler.assign(me_and_x(Steady::max()), LastStarts{});
  sim.advance_to(at("2026-01-01T11:00:00Z"));
  REQUIRE(sim.launcher.launched.size() == 1);
  REQUIRE(sim.scheduler.waiting() == 2);
  // Every table moves to x (this member is no longer picked for them).
  sim.scheduler.assign(FleetView("me", {"me", "x"}, false, Steady::max()), std::nullopt);
  CHECK(sim.events.lost == 3);
  CHECK(sim.scheduler.waiting() == 0);
  CHECK(sim.scheduler.in_flight() == 1);
  sim.finish(sim.launcher.running.begin()->first, RunStatus::Success);
  CHECK(sim.launcher.launched.size() == 1);
  CHECK(sim.scheduler.in_flight() == 0);
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("an input that moved wakes its dependents now, each once; one running goes once more when it ends") {
  const auto config = std::make_shared<const Config>(testing::config_of_pipeline(R"(pipeline: p
source: w
target: w
tables:
  - { name: orders, source_table: s.orders, target_table: r.orders, key: [id], cursor: at, schedule: "*/5 * * * *" }
  - { name: lines, source_table: s.lines, target_table: r.lines, key: [id], cursor: at, schedule: "0 * * * *",
      inputs: [p.orders] }
  - name: daily
    mode: partition
    partition: { column: day }
    query: "select $1::date as day where $2 > $1"
    target_table: m.daily
    schedule: "5 0 * * *"
    inputs: [p.orders, p.lines]
)"));
  SimulatedScheduler sim(4, at("2026-01-01T10:00:30Z"));
  sim.scheduler.start(config, {});
  sim.scheduler.input_moved(TableKey{"p", "orders"});
  CHECK(launches_of(sim.launcher, "lines") == std::vector<std::string>{"2026-01-01T10:00:30Z input"});
  CHECK(launches_of(sim.launcher, "daily") == std::vector<std::string>{"2026-01-01T10:00:30Z input"});
  CHECK(launches_of(sim.launcher, "orders").empty());
  // Both still run: lines moves meanwhile, which daily reads too.
  sim.scheduler.input_moved(TableKey{"p", "lines"});
  sim.scheduler.input_moved(TableKey{"p", "orders"});
  CHECK(sim.launcher.launched.size() == 2);
  CHECK(sim.events.overruns.empty());  // a wake is no firing of the schedule
  sim.finish("lines", RunStatus::Success);
  CHECK(launches_of(sim.launcher, "lines").size() == 2);  // once more, with orders' new watermark
  sim.finish("daily", RunStatus::Success);
  CHECK(launches_of(sim.launcher, "daily").size() == 2);  // once more, though woken twice meanwhile
  sim.finish("lines", RunStatus::Success);
  sim.finish("daily", RunStatus::Success);
  CHECK(sim.launcher.launched.size() == 4);
  // A table with no dependents, or none configured here, wakes nothing.
  sim.scheduler.input_moved(TableKey{"p", "daily"});
  sim.scheduler.input_moved(TableKey{"q", "elsewhere"});
  CHECK(sim.launcher.launched.size() == 4);
  // The schedules fire as before.
  sim.advance_to(at("2026-01-01T11:00:10Z"));
  CHECK(launches_of(sim.launcher, "lines").back() == "2026-01-01T11:00:00Z schedule");
}

TEST_CASE("an input that moved wakes only the dependents this member owns; one waiting for a worker stays as it is") {
  const auto config = std::make_shared<const Config>(testing::config_of_pipeline(R"(pipeline: p
source: w
target: w
tables:
  - { name: orders, source_table: s.orders, target_table: r.orders, key: [id], cursor: at, schedule: "*/5 * * * *" }
  - { name: a, source_table: s.a, target_table: r.a, key: [id], cursor: at, schedule: "0 * * * *", inputs: [p.orders] }
  - { name: b, source_table: s.b, target_table: r.b, key: [id], cursor: at, schedule: "0 * * * *", inputs: [p.orders] }
)"));
  SimulatedScheduler sim(1, at("2026-01-01T10:00:30Z"));
  sim.scheduler.start(config, {});
  sim.scheduler.input_moved(TableKey{"p", "orders"});
  // One worker: a runs, b waits for it.
  CHECK(launches_of(sim.launcher, "a") == std::vector<std::string>{"2026-01-01T10:00:30Z input"});
  CHECK(sim.scheduler.waiting() == 1);
  sim.scheduler.input_moved(TableKey{"p", "orders"});
  CHECK(sim.scheduler.waiting() == 1);
  sim.finish("a", RunStatus::Success);  // b starts; a goes once more after it
  CHECK(launches_of(sim.launcher, "b") == std::vector<std::string>{"2026-01-01T10:00:30Z input"});
  CHECK(sim.scheduler.waiting() == 1);
  sim.finish("b", RunStatus::Success);
  CHECK(launches_of(sim.launcher, "a").size() == 2);
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("in a fleet an input's move wakes only the dependents this member owns: the others' members hear it too") {
  const std::string mine = owned_by("me", 1)[0];
  const std::string theirs = owned_by("x", 1)[0];
  std::string text = "pipeline: p\nsource: w\ntarget: w\ntables:\n"
                     "  - { name: src, source_table: s.src, target_table: r.src, key: [id], cursor: at, "
                     "schedule: \"*/5 * * * *\" }\n";
  for (const std::string& name : {mine, theirs}) {
    text += "  - { name: " + name + ", source_table: s." + name + ", target_table: r." + name +
            ", key: [id], cursor: at, schedule: \"0 * * * *\", inputs: [p.src] }\n";
  }
  SimulatedScheduler sim(4, at("2026-01-01T10:30:00Z"));
  sim.scheduler.start(std::make_shared<const Config>(testing::config_of_pipeline(text)), {}, FleetView::none());
  sim.scheduler.assign(me_and_x(Steady::max()), LastStarts{});
  sim.scheduler.input_moved(TableKey{"p", "src"});
  CHECK(launches_of(sim.launcher, mine) == std::vector<std::string>{"2026-01-01T10:30:00Z input"});
  CHECK(launches_of(sim.launcher, theirs).empty());
}

}  // namespace tidemark

namespace tidemark {

TEST_CASE("regression: an input that moved while its dependent changed hands woke no member; it runs once gained") {
  // A second member joins: the first gives the dependent away at once, the
  // second may fire it only once its view settles. A wake in between was
  // lost, and the dependent waited for its schedule.
  const std::string mine = owned_by("me", 1)[0];
  const std::string text = "pipeline: p\nsource: w\ntarget: w\ntables:\n"
                           "  - { name: src, source_table: s.src, target_table: r.src, key: [id], cursor: at, "
                           "schedule: \"*/5 * * * *\" }\n"
                           "  - { name: " + mine + ", source_table: s.d, target_table: r.d, key: [id], cursor: at, "
                           "schedule: \"0 0 1 1 *\", inputs: [p.src] }\n";
  SimulatedScheduler sim(4, at("2026-01-01T10:30:00Z"));
  sim.scheduler.start(std::make_shared<const Config>(testing::config_of_pipeline(text)), {}, FleetView::none());
  sim.scheduler.assign(FleetView("me", {"me", "x"}, false, Steady::max()), std::nullopt);  // joining
  sim.scheduler.input_moved(TableKey{"p", "src"});
  CHECK(launches_of(sim.launcher, mine).empty());
  sim.scheduler.assign(me_and_x(Steady::max()), LastStarts{{JobKey{TableKey{"p", mine}, JobKind::Load},
                                                             at("2026-01-01T10:00:00Z")}});
  sim.advance_to(at("2026-01-01T10:30:01Z"));
  CHECK(launches_of(sim.launcher, mine) == std::vector<std::string>{"2026-01-01T10:30:00Z input"});
  sim.finish(mine, RunStatus::Success);
  // Once: a later view of the same fleet fires nothing more.
  sim.scheduler.assign(me_and_x(Steady::max()), LastStarts{});
  sim.advance_to(at("2026-01-01T10:31:00Z"));
  CHECK(launches_of(sim.launcher, mine).size() == 1);
}

}  // namespace tidemark

namespace tidemark {
namespace {

std::shared_ptr<const Config> one_dependent(const std::string& schedule) {
  return std::make_shared<const Config>(testing::config_of_pipeline(
      "pipeline: p\nsource: w\ntarget: w\ntables:\n"
      "  - { name: src, source_table: s.src, target_table: r.src, key: [id], cursor: at, schedule: \"0 0 1 1 *\" }\n"
      "  - { name: dep, source_table: s.d, target_table: r.d, key: [id], cursor: at, schedule: \"" + schedule +
      "\", inputs: [p.src] }\n"));
}

}  // namespace

TEST_CASE("regression: a schedule's firing that met an input's wake going counted an overrun; it runs after it") {
  SimulatedScheduler sim(4, at("2026-01-01T10:04:50Z"));
  sim.scheduler.start(one_dependent("*/5 * * * *"), {});
  sim.scheduler.input_moved(TableKey{"p", "src"});
  sim.advance_to(at("2026-01-01T10:05:01Z"));  // the schedule fires while the wake runs
  CHECK(sim.events.overruns.empty());
  CHECK(launches_of(sim.launcher, "dep") == std::vector<std::string>{"2026-01-01T10:04:50Z input"});
  sim.finish("dep", RunStatus::Success);
  CHECK(launches_of(sim.launcher, "dep") ==
        std::vector<std::string>{"2026-01-01T10:04:50Z input", "2026-01-01T10:05:01Z schedule"});
}

TEST_CASE("regression: an input's wake that found the table's lock held was lost; it comes back after the backoff") {
  SimulatedScheduler sim(4, at("2026-01-01T10:00:30Z"));
  sim.scheduler.start(one_dependent("0 0 1 1 *"), {});
  sim.scheduler.input_moved(TableKey{"p", "src"});
  sim.finish("dep", RunStatus::SkippedLocked);  // its reconcile, or its former owner's run, held it
  sim.advance_to(at("2026-01-01T10:00:41Z"));
  CHECK(launches_of(sim.launcher, "dep") ==
        std::vector<std::string>{"2026-01-01T10:00:30Z input", "2026-01-01T10:00:40Z retry"});
}

TEST_CASE("a failing dependent is not woken: it waits for its retry, or, failing permanently, for a person") {
  SimulatedScheduler sim(4, at("2026-01-01T10:00:30Z"));
  sim.scheduler.start(one_dependent("0 0 1 1 *"), {});
  sim.scheduler.input_moved(TableKey{"p", "src"});
  sim.finish("dep", RunStatus::Failed, ErrorKind::Permanent);
  sim.scheduler.input_moved(TableKey{"p", "src"});
  CHECK(launches_of(sim.launcher, "dep").size() == 1);
}

}  // namespace tidemark

namespace tidemark {
namespace {

PauseSet paused_scopes(const std::vector<std::pair<std::string, std::string>>& scopes) {
  std::vector<Pause> pauses;
  for (const auto& [pipeline, table] : scopes) {
    Pause p;
    p.pipeline = pipeline;
    p.table = table;
    p.reason = "maintenance";
    p.paused_by = "ops";
    pauses.push_back(p);
  }
  return PauseSet(std::move(pauses));
}

}  // namespace

TEST_CASE("a paused table fires nothing until resumed, then at its next firing; a run in flight finishes") {
  SimulatedScheduler sim(4, at("2026-01-01T10:00:30Z"));
  sim.scheduler.start(config_of({{"a", "* * * * *"}, {"b", "* * * * *"}}), {});
  sim.advance_to(at("2026-01-01T10:01:10Z"));
  REQUIRE(sim.launcher.running.count("a") == 1);
  sim.scheduler.set_pauses(paused_scopes({{"p", "a"}}), {});
  sim.finish("a", RunStatus::Failed);  // in flight when paused: it ends as it ends, and is not retried
  sim.finish("b", RunStatus::Success);
  for (const char* minute : {"2026-01-01T10:02:10Z", "2026-01-01T10:03:10Z", "2026-01-01T10:04:10Z",
                             "2026-01-01T10:05:10Z"}) {
    sim.advance_to(at(minute));
    sim.finish("b", RunStatus::Success);
  }
  CHECK(launches_of(sim.launcher, "a") == std::vector<std::string>{"2026-01-01T10:01:00Z schedule"});
  CHECK(launches_of(sim.launcher, "b").size() == 5);
  CHECK(sim.events.overruns.empty());
  sim.scheduler.set_pauses(PauseSet(), {});
  CHECK(launches_of(sim.launcher, "a").size() == 1);  // missed firings are not made up without --catch-up
  sim.advance_to(at("2026-01-01T10:06:00Z"));
  CHECK(launches_of(sim.launcher, "a").back() == "2026-01-01T10:06:00Z schedule");  // its retry passed while paused
}

TEST_CASE("a pipeline's pause holds every table of it, a waiting firing included, and input wakes too") {
  const auto config = std::make_shared<const Config>(testing::config_of_pipeline(R"(pipeline: p
source: w
target: w
tables:
  - { name: orders, source_table: s.orders, target_table: r.orders, key: [id], cursor: at, schedule: "0 * * * *" }
  - { name: lines, source_table: s.lines, target_table: r.lines, key: [id], cursor: at, schedule: "0 * * * *",
      inputs: [p.orders] }
)"));
  SimulatedScheduler sim(1, at("2026-01-01T09:59:30Z"));
  sim.scheduler.start(config, {});
  sim.advance_to(at("2026-01-01T10:00:00Z"));
  REQUIRE(sim.launcher.launched.size() == 1);  // one worker: the other firing waits
  REQUIRE(sim.scheduler.waiting() == 1);
  const std::string first = sim.launcher.launched.front().firing.table.table;
  sim.scheduler.set_pauses(paused_scopes({{"p", ""}}), {});
  CHECK(sim.scheduler.waiting() == 0);
  sim.finish(first, RunStatus::Success);
  sim.scheduler.input_moved(TableKey{"p", "orders"});
  sim.advance_to(at("2026-01-01T12:00:10Z"));
  CHECK(sim.launcher.launched.size() == 1);
  CHECK(sim.events.queue_lengths.back() == 0);
}

TEST_CASE("regression: a batch's run handed back after its table was paused is dropped, not run") {
  SimulatedScheduler sim(1, at("2026-01-01T09:59:00Z"));
  sim.scheduler.start(config_of({{"a", "0 0 10 * * *"}, {"b", "0 0 10 * * *"}, {"c", "0 0 10 * * *"}}), {});
  sim.advance_to(at("2026-01-01T10:00:00Z"));
  sim.finish(sim.launcher.launched[0].firing.table.table, RunStatus::Success);
  REQUIRE(sim.launcher.batches == std::vector<std::size_t>{2});
  std::vector<std::string> in_batch;
  for (const auto& [table, order] : sim.launcher.running) in_batch.push_back(table);
  sim.scheduler.set_pauses(paused_scopes({{"p", in_batch[0]}}), {});
  sim.send_alone(in_batch[0]);  // it found rows to load: on its own, it would load them while paused
  CHECK(sim.launcher.launched.size() == 3);
  CHECK(sim.scheduler.waiting() == 0);
  sim.finish(in_batch[1], RunStatus::Success);
  CHECK(sim.scheduler.in_flight() == 0);
}

TEST_CASE("resume --catch-up runs once now what missed a firing since its pause began, only where it is owned") {
  SimulatedScheduler sim(4, at("2026-01-01T09:30:00Z"));
  sim.scheduler.start(config_of({{"hourly", "0 * * * *"}, {"daily", "0 0 * * *"}}), {});
  sim.scheduler.set_pauses(paused_scopes({{"p", ""}}), {});
  sim.advance_to(at("2026-01-01T11:30:00Z"));
  CHECK(sim.launcher.launched.empty());
  const double paused_since = 1767259800;  // 2026-01-01T09:30:00Z
  sim.scheduler.set_pauses(PauseSet(), {CatchUpResume{"p", "", paused_since}, CatchUpResume{"q", "", 0}});
  sim.advance_to(sim.clock.now());
  CHECK(launches_of(sim.launcher, "hourly") == std::vector<std::string>{"2026-01-01T11:30:00Z resume"});
  CHECK(launches_of(sim.launcher, "daily").empty());  // midnight did not come while paused
  sim.finish("hourly", RunStatus::Success);
  sim.advance_to(at("2026-01-01T12:00:10Z"));
  CHECK(launches_of(sim.launcher, "hourly").back() == "2026-01-01T12:00:00Z schedule");
}

}  // namespace tidemark
