#include "quiet_runs_contract.h"

#include <doctest/doctest.h>

namespace tidemark::contract {
namespace {

CursorValue at(std::int64_t v) { return CursorValue{CursorType::Integer, v}; }

QuietRun quiet(const TableKey& table, const std::optional<WatermarkMove>& move) {
  QuietRun q;
  q.start = RunStart{table, RunTrigger::Schedule, std::nullopt};
  q.scheduled = Instant(std::chrono::seconds(1'700'000'000));
  q.started = 1'700'000'000'000'000;
  q.move = move;
  q.end.success = true;
  q.end.watermark_after = move ? std::optional<CursorValue>(move->next) : std::nullopt;
  return q;
}

QuietRunRecorded record_one(const CompareAndSetPorts& ports, const QuietRun& run) {
  const auto recorded = ports.state.record_quiet_runs({run});
  REQUIRE(recorded.ok());
  REQUIRE(recorded->size() == 1);
  return (*recorded)[0];
}

std::optional<CursorValue> stored(const CompareAndSetPorts& ports) {
  const auto read = ports.state.read_watermark(ports.table);
  REQUIRE(read.ok());
  return *read ? std::optional<CursorValue>((*read)->value) : std::nullopt;
}

}  // namespace

void check_quiet_runs(const CompareAndSetPorts& ports) {
  const RunLock lock{ports.table, std::nullopt};
  const auto taken = ports.state.try_lock_all({lock});
  REQUIRE(taken.ok());
  REQUIRE(*taken == std::vector<bool>{true});

  // Nothing stored: the read finds nothing, and no move is written from nothing.
  auto read = ports.state.read_tables({ports.table});
  REQUIRE(read.ok());
  REQUIRE(read->tables.size() == 1);
  CHECK_FALSE(read->tables[0].watermark);
  CHECK(read->tables[0].run == 0);
  CHECK_FALSE(record_one(ports, quiet(ports.table, WatermarkMove{std::nullopt, at(10)})).written);
  CHECK_FALSE(stored(ports));

  // A first value, as a run stores it.
  const auto opened = ports.state.open_run(RunStart{ports.table, RunTrigger::Manual, std::nullopt});
  REQUIRE(opened.ok());
  {
    auto work = ports.target.begin(lock);
    StepRecord record;
    record.lock = lock;
    record.run = opened->run;
    record.move = WatermarkMove{std::nullopt, at(10)};
    REQUIRE(work->record(record).value().written);
    REQUIRE(work->commit().ok());
  }
  read = ports.state.read_tables({ports.table});
  REQUIRE(read.ok());
  REQUIRE(read->tables[0].watermark);
  CHECK(read->tables[0].watermark->value == at(10));

  // The run above was never finished: the quiet run's lock proves it
  // abandoned, as a run's open_run would.
  QuietRunRecorded r = record_one(ports, quiet(ports.table, WatermarkMove{at(10), at(20)}));
  CHECK(r.written);
  CHECK(r.run > opened->run);
  CHECK(stored(ports) == at(20));
  // From a value no longer stored: not written, the watermark kept.
  CHECK_FALSE(record_one(ports, quiet(ports.table, WatermarkMove{at(10), at(30)})).written);
  CHECK(stored(ports) == at(20));
  // Without a move.
  r = record_one(ports, quiet(ports.table, std::nullopt));
  CHECK(r.written);
  CHECK(stored(ports) == at(20));

  const auto next = ports.state.open_run(RunStart{ports.table, RunTrigger::Manual, std::nullopt});
  REQUIRE(next.ok());
  CHECK(next->abandoned == 0);  // marked by the first quiet run already
  CHECK(ports.state.finish_run(next->run, RunEnd{}).ok());

  // Once the lock is gone nothing is written.
  ports.state.unlock_all({lock});
  CHECK_FALSE(record_one(ports, quiet(ports.table, WatermarkMove{at(20), at(40)})).written);
  CHECK(stored(ports) == at(20));
}

}  // namespace tidemark::contract
