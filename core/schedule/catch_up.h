// The fleet's catch-up rule: when a member gains a table, whether it runs
// the table at once for a firing that may have gone unrun while nobody
// (or it itself, unsure of its lease) fired it. A pure decision from the
// evidence; the scheduler gathers the evidence and carries it out.
// Thread-safe.
#pragma once

#include <optional>

#include "core/config/config_model.h"
#include "core/schedule/job_kind.h"
#include "core/time/time_types.h"

namespace tidemark {

// Why this member let a firing of the table pass without running it, the
// strongest reason since the table last had an owner that could run it.
// Ordered: a later skip keeps the stronger reason (max).
enum class SkippedFiring {
  None,
  // No view decided whose the table was (joining, or after the lease
  // ended): another member may have run it.
  Undecided,
  // This member's lease had lapsed by its own clock while the database's
  // still held: no other member can have run it.
  LeaseLapsed,
};

// What the run history, read with the view that gained the table, says.
struct TableHistory {
  enum class Answer {
    NotRead,   // the history could not be read
    NotAsked,  // the table was added (a reload) after the history was asked for
    NeverRan,  // asked, and no run of the table was found
    Ran,       // `last_started` is its last run's start, on any member
  };
  Answer answer = Answer::NotRead;
  std::optional<Instant> last_started;
};

// Run the table now (its catch-up) or wait for its next firing. A history
// that saw it run decides alone (a firing fell after that run); without
// one, a lapsed lease's skip runs it (nobody else could have), and a
// skip while undecided runs it only when the history saw it never run.
bool catch_up_on_gain(SkippedFiring skipped, const TableHistory& history, const PipelineConfig& pipeline,
                      const TableConfig& table, JobKind kind, Instant now);

}  // namespace tidemark
