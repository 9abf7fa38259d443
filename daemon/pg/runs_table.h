// tidemark.runs, one row per run: the one owner of what a row says. The
// words its status, kind, trigger and error_kind columns hold, the kind a
// run is recorded as, and the texts of the statements over the rows
// (PgStateStore's, StateReader's) spelled with those words. Constants
// and free functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "core/run/run_ports.h"
#include "core/schedule/job_kind.h"

namespace tidemark {

// status (SPEC §5): a run is `running` until it ends `success` or `failed`.
enum class RunRowStatus { Running, Success, Failed };
std::string_view run_row_status_word(RunRowStatus status);

// kind (state schema version 15): the job a run is, 'load' or 'reconcile',
// whatever fired it (trigger, run_trigger_name's word).
std::string_view job_kind_word(JobKind kind);
JobKind job_kind_named(std::string_view word);
// What a run started by `trigger` is: a reconcile's run is a reconcile,
// every other trigger fires a load.
JobKind job_kind_of(RunTrigger trigger);

// `sql` with each mark of a word replaced by that word as a quoted
// literal: {running} {success} {failed} (status), {load} {reconcile}
// (kind), {transient} (error_kind). Literals rather than parameters: a
// partial index (`where status = 'success'`) serves only a statement that
// names the same constant. Other text is left as it is.
std::string run_row_sql(std::string_view sql);

}  // namespace tidemark
