#include "core/schedule/catch_up.h"

#include "core/schedule/firing_plan.h"

namespace tidemark {

bool catch_up_on_gain(SkippedFiring skipped, const TableHistory& history, const PipelineConfig& pipeline,
                      const TableConfig& table, JobKind kind, Instant now) {
  switch (history.answer) {
    case TableHistory::Answer::Ran:
      return missed_firing(pipeline, table, history.last_started, now, kind);
    case TableHistory::Answer::NeverRan:
      return skipped != SkippedFiring::None;
    case TableHistory::Answer::NotRead:
    case TableHistory::Answer::NotAsked:
      return skipped == SkippedFiring::LeaseLapsed;
  }
  return false;
}

}  // namespace tidemark
