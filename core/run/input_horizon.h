// A table and its inputs (`inputs:`, the tables whose targets its source
// reads), both ways. Upstream: each input's target holds every row below
// its watermark (a partition input: below the end of its done partitions),
// so the table's hi never passes the least of them. Downstream: rows of a
// table changed below where its dependents' done partitions end make
// those partitions be checked again. Pure functions over the
// configuration and what the state database says; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/config/config_model.h"
#include "core/result.h"
#include "core/run/run_observer.h"
#include "core/run/run_ports.h"
#include "core/watermark/safe_horizon.h"

namespace tidemark {

// The instant below which one input holds every row, from what the state
// holds of it (`state`); nothing when it has loaded nothing. A timestamp
// or date watermark is a wall-clock value, read in the input's pipeline's
// zone: its first instant there. An incremental input with a lookback
// claims its rows only that far below its watermark: a row it reads again
// may be one it had not read. Fails (permanent) for an integer one.
Result<std::optional<SourceMicros>> input_bound(const TableRef& input, const InputState& state);

// The least of the inputs' bounds.
struct InputLimit {
  // The instant below which every input holds every row; nothing when an
  // input has loaded nothing yet (then nothing is complete).
  std::optional<SourceMicros> until;
  // The input that sets it ("shop.orders"), and what status says of it:
  // "shop.orders, at 2026-12-05T23:58:10Z" or "shop.orders, which has
  // loaded nothing yet".
  std::string input;
  std::string described;
};

// The inputs' limit, in the order of `inputs` (states in the same order).
// Fails (permanent) for an input whose watermark is not a time (an integer
// cursor's id bounds no instant), naming it and the fix.
Result<InputLimit> inputs_limit(const std::vector<TableRef>& inputs, const std::vector<InputState>& states);

// Why a table with inputs cannot read this source: a hot standby without
// primary:, whose replay may not have reached what an input claims has
// committed (its rows, read now, could be short). Nothing when it can.
std::optional<Error> refuse_inputs_on(const HorizonReading& reading, const TableConfig& table);

// The source's horizon `decision`, lowered to the inputs' limit where that
// is earlier: held_by then names the input waited for, lag_seconds counts
// from `clock` (the source's) to the limit, and an input that has loaded
// nothing holds the horizon at the stored watermark. Returns, when the
// inputs hold it back, how much further the source alone would have let
// it go, in seconds (0 when that cannot be told: an input that has loaded
// nothing); nothing when they hold nothing back.
std::optional<double> hold_for_inputs(HorizonDecision& decision, const InputLimit& limit, SourceMicros clock);

// The dependents' done partitions to flag because rows of `table` changed
// at or after `from` ("input shop.orders " + `because`); nothing when the
// table has no partition table among its dependents. A partition table's
// rows are its partitions' (from: the partition's start); an incremental
// table's change says nothing of which of a dependent's partitions read
// the rows (its cursor is not their partition column): kCalendarStart.
std::optional<DownstreamRecheck> downstream_recheck(const PipelineConfig& pipeline, const TableConfig& table,
                                                   Instant from, const std::string& because);

// Tells the fleet that `table` moved (StateStore::announce_moved) when a
// run of it committed anything (a step, a partition) and it has
// dependents, so that they run within seconds rather than at their next
// firing.
void announce_to_dependents(const TableConfig& table, const RunSummary& summary, StateStore& state);

// The same for what is no run: a backfill moves no watermark, but what it
// wrote (`wrote`) flagged the dependents' partitions, or filled a gap they
// wait for, which they check or write at once.
void announce_if_written(const TableConfig& table, const TableKey& key, bool wrote, StateStore& state);

}  // namespace tidemark
