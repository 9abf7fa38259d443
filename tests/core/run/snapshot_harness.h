// A snapshot table's run over the in-memory ports (tests/core/fake_ports.h):
// table `t` of pipeline `p` reads `src` on key `id`, the source's clock at
// 1000 s. Shared by the tests of snapshot runs; one per test, on its thread.
#pragma once

#include <map>

#include "core/run/snapshot_run.h"
#include "fake_ports.h"

namespace tidemark {

struct SnapshotHarness : FakeRunPorts {
  SnapshotHarness() {
    pipeline.name = "p";
    table.name = "t";
    table.mode = TableMode::Snapshot;
    table.source_table = QualifiedName(std::nullopt, "src");
    table.key = {"id"};
    source.now = Instant{} + std::chrono::seconds(1000);
  }
  RunSummary run() { return SnapshotRun(context()).execute(RunTrigger::Manual); }
  // The target holds the source's rows, no more, no fewer.
  bool target_matches_source() const {
    std::map<std::int64_t, std::int64_t> expected;
    for (const FakeRow& r : source.rows) expected[r.key] = r.cursor;
    return expected == target.rows;
  }
  // The source's clock as a snapshot's watermark.
  CursorValue clock() const {
    return {CursorType::TimestampTz,
            std::chrono::duration_cast<std::chrono::microseconds>(source.now.time_since_epoch()).count()};
  }
};

}  // namespace tidemark
