#include "compare_and_set_contract.h"

#include <doctest/doctest.h>

namespace tidemark::contract {
namespace {

// Records a move from `expected` to `next` in a unit of work of its own,
// committing it when written; `snapshot`: both are a snapshot's times.
StepRecorded record_move(const CompareAndSetPorts& ports, const RunLock& lock, RunId run,
                  const std::optional<CursorValue>& expected, const CursorValue& next, bool snapshot) {
  auto work = ports.target.begin(lock);
  StepRecord record;
  record.lock = lock;
  record.run = run;
  record.move = WatermarkMove{expected, next, snapshot};
  const auto recorded = work->record(record);
  REQUIRE(recorded.ok());
  if (recorded->written) REQUIRE(work->commit().ok());
  return *recorded;
}

std::optional<CursorValue> read_stored(const CompareAndSetPorts& ports, bool snapshot) {
  const auto read = ports.state.read_watermark(ports.table);
  REQUIRE(read.ok());
  if (!*read) return std::nullopt;
  CHECK((*read)->snapshot == snapshot);
  return (*read)->value;
}

}  // namespace

void check_compare_and_set(const CompareAndSetPorts& ports, bool snapshot) {
  CAPTURE(snapshot);
  // A snapshot's watermark is a time; a cursor's, here, an integer.
  const auto at = [snapshot](std::int64_t v) {
    return CursorValue{snapshot ? CursorType::TimestampTz : CursorType::Integer, v};
  };
  const auto move = [&](const RunLock& held, RunId in, const std::optional<CursorValue>& expected,
                        const CursorValue& next) { return record_move(ports, held, in, expected, next, snapshot); };
  const auto stored = [&] { return read_stored(ports, snapshot); };
  const RunLock lock{ports.table, std::nullopt};
  REQUIRE(ports.state.lock(lock, /*wait=*/false).value());
  const auto opened = ports.state.open_run(RunStart{ports.table, RunTrigger::Manual, std::nullopt});
  REQUIRE(opened.ok());
  const RunId run = opened->run;

  // From nothing stored to a first value.
  StepRecorded r = move(lock, run, std::nullopt, at(10));
  CHECK(r.lock_held);
  CHECK(r.written);
  CHECK(stored() == at(10));

  // From nothing again: another writer got there first.
  r = move(lock, run, std::nullopt, at(20));
  CHECK(r.lock_held);
  CHECK_FALSE(r.written);
  CHECK(r.found == at(10));
  CHECK(stored() == at(10));

  // From a value that is not the stored one, below it or above it.
  for (const std::int64_t expected : {5, 15}) {
    CAPTURE(expected);
    r = move(lock, run, at(expected), at(20));
    CHECK_FALSE(r.written);
    CHECK(r.found == at(10));
  }
  CHECK(stored() == at(10));

  // From the stored value: written.
  r = move(lock, run, at(10), at(20));
  CHECK(r.written);
  CHECK(stored() == at(20));

  // From the stored value, but as the other kind: a snapshot run never
  // moves a cursor's watermark, nor an incremental run a snapshot's.
  r = record_move(ports, lock, run, at(20), at(25), !snapshot);
  CHECK(r.lock_held);
  CHECK_FALSE(r.written);
  CHECK(r.found == at(20));
  CHECK(stored() == at(20));

  // The lock gone: nothing is written, whatever the values.
  ports.state.unlock(lock);
  r = move(lock, run, at(20), at(30));
  CHECK_FALSE(r.lock_held);
  CHECK_FALSE(r.written);
  CHECK(stored() == at(20));

  RunEnd end;
  end.success = true;
  CHECK(ports.state.finish_run(run, end).ok());
}

}  // namespace tidemark::contract
