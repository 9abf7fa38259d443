#include "core/run/input_horizon.h"

#include <chrono>

#include "core/time/partition_calendar.h"

namespace tidemark {
namespace {

SourceMicros micros_of(Instant t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

}  // namespace

Result<std::optional<SourceMicros>> input_bound(const TableRef& input, const InputState& state) {
  if (input.mode == TableMode::Partition) {
    if (!state.partitions_done_until) return std::optional<SourceMicros>();
    return std::optional<SourceMicros>(micros_of(*state.partitions_done_until));
  }
  if (!state.watermark) return std::optional<SourceMicros>();
  const CursorValue& value = state.watermark->value;
  // What it reads again each run it has not claimed to have read.
  const SourceMicros lookback = input.mode == TableMode::Incremental && input.lookback.kind == CursorSpan::Kind::Duration
                                    ? input.lookback.amount * 1'000'000
                                    : 0;
  switch (value.type) {
    case CursorType::TimestampTz: return std::optional<SourceMicros>(value.raw - lookback);
    case CursorType::Timestamp: {
      const auto wall = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::microseconds(value.raw));
      const SourceMicros below_second = value.raw - wall.count() * 1'000'000;
      return std::optional<SourceMicros>(micros_of(first_instant_of(LocalTime(wall), *input.zone)) + below_second -
                                         lookback);
    }
    case CursorType::Date:
      return std::optional<SourceMicros>(
          micros_of(first_instant_of(LocalTime(date::days(value.raw)), *input.zone)) - lookback);
    case CursorType::Integer: break;
  }
  return permanent_error("input " + input.display() + " has an integer cursor: its watermark (" +
                         cursor_to_text(value) +
                         ") is an id, which says nothing of time, so it cannot bound this table; remove it from "
                         "inputs, or give it a time cursor");
}

Result<InputLimit> inputs_limit(const std::vector<TableRef>& inputs, const std::vector<InputState>& states) {
  InputLimit out;
  bool first = true;
  for (std::size_t i = 0; i < inputs.size() && i < states.size(); ++i) {
    const auto bound = input_bound(inputs[i], states[i]);
    if (!bound) return bound.failure();
    if (!*bound) {
      // Nothing below any instant is claimed: the least of all.
      out.until.reset();
      out.input = inputs[i].display();
      out.described = out.input + ", which has loaded nothing yet";
      return out;
    }
    if (first || **bound < *out.until) {
      out.until = **bound;
      out.input = inputs[i].display();
      out.described = out.input + ", at " + source_instant_text(**bound);
    }
    first = false;
  }
  return out;
}

std::optional<Error> refuse_inputs_on(const HorizonReading& reading, const TableConfig& table) {
  if (!reading.standby_without_primary || table.inputs.empty()) return std::nullopt;
  return permanent_error("the source is a hot standby without a primary: connection, whose replay may not have "
                         "reached the rows its inputs (" + table.inputs.front().display() +
                         (table.inputs.size() > 1 ? ", ..." : "") +
                         ") claim to have loaded; give the connection its primary:, or read the inputs' targets on "
                         "the primary");
}

std::optional<double> hold_for_inputs(HorizonDecision& decision, const InputLimit& limit, SourceMicros clock) {
  if (limit.input.empty() || decision.hold_at_watermark) return std::nullopt;
  if (!limit.until) {
    decision.hold_at_watermark = true;
    decision.instant.reset();
    decision.held_by = "waiting for " + limit.described;
    return 0.0;
  }
  if (!decision.instant || *decision.instant <= *limit.until) return std::nullopt;
  const double beyond = static_cast<double>(*decision.instant - *limit.until) / 1e6;
  decision.instant = *limit.until;
  decision.held_by = "waiting for " + limit.described;
  decision.lag_seconds = static_cast<double>(clock - *limit.until) / 1e6;
  return beyond;
}

std::optional<DownstreamRecheck> downstream_recheck(const PipelineConfig& pipeline, const TableConfig& table,
                                                   Instant from, const std::string& because) {
  DownstreamRecheck out;
  for (const TableRef& dependent : table.dependents) {
    if (dependent.mode == TableMode::Partition) out.tables.push_back(TableKey{dependent.pipeline, dependent.table});
  }
  if (out.tables.empty()) return std::nullopt;
  out.from = from;
  out.because = "input " + pipeline.name + "." + table.name + " " + because;
  return out;
}

void announce_to_dependents(const TableConfig& table, const RunSummary& summary, StateStore& state) {
  const bool moved = summary.partitions ? summary.chunks > 0 : summary.watermark_after != summary.watermark_before;
  // A reconcile moves no watermark: what it repaired flagged the
  // dependents' partitions, which they check at once.
  const bool repaired =
      summary.reconcile && (summary.reconcile->deleted > 0 || summary.rows_written > 0);
  announce_if_written(table, summary.table, moved || repaired, state);
}

void announce_if_written(const TableConfig& table, const TableKey& key, bool wrote, StateStore& state) {
  if (wrote && !table.dependents.empty()) state.announce_moved(key);
}

}  // namespace tidemark
