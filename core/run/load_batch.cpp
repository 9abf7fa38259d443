#include "core/run/load_batch.h"

#include "core/run/input_horizon.h"

#include <cstdlib>

#include "core/config/table_modes.h"
#include "core/run/incremental_run.h"
#include "core/run/run_lifecycle.h"

namespace tidemark {
namespace {

// A member whose range the source is asked about: nothing new there means
// its run is done.
struct Candidate {
  std::size_t member = 0;
  RunSummary summary;
  IncrementalPlan plan;
};

}  // namespace

std::vector<std::optional<RunSummary>> LoadBatch::execute(const std::vector<BatchMember>& members) {
  std::vector<std::optional<RunSummary>> out(members.size());
  std::vector<RunLock> locks;
  for (const BatchMember& m : members) {
    if (table_mode(m.table->mode).run != RunClass::IncrementalRun) std::abort();  // the scheduler batches loads of incremental tables
    locks.push_back(RunLock{TableKey{pipeline_.name, m.table->name}, std::nullopt});
  }
  const auto taken = state_.try_lock_all(locks);
  if (!taken) return out;  // each run on its own says why
  std::vector<std::size_t> held;
  std::vector<RunLock> held_locks;
  std::vector<TableKey> held_tables;
  std::vector<RunLock> not_owned;
  for (std::size_t i = 0; i < members.size(); ++i) {
    if ((*taken)[i] && ownership_.owns(locks[i].table)) {
      held.push_back(i);
      held_locks.push_back(locks[i]);
      held_tables.push_back(locks[i].table);
      continue;
    }
    if ((*taken)[i]) not_owned.push_back(locks[i]);
    // As a run of its own would end: another run holds the table, or
    // another member of the fleet runs it now (RunLifecycle::open).
    RunSummary skipped;
    skipped.table = locks[i].table;
    skipped.status = RunStatus::SkippedLocked;
    observer_.on_run_finished(skipped);
    out[i] = skipped;
  }
  if (!not_owned.empty()) state_.unlock_all(not_owned);
  if (held.empty()) return out;

  const auto read = state_.read_tables(held_tables);
  if (!read) {
    state_.unlock_all(held_locks);
    return out;
  }
  std::vector<const TableConfig*> held_configs;
  for (const std::size_t i : held) held_configs.push_back(members[i].table);
  source_.about_to_inspect(held_configs);
  target_.about_to_check(held_configs);
  std::vector<Candidate> candidates;
  for (std::size_t k = 0; k < held.size() && !cancel_.cancelled(); ++k) {
    const std::size_t i = held[k];
    const OpenedRun& opened = read->tables[k];
    // A first run, or a watermark that is a snapshot's or unreadable: a
    // run of its own says what becomes of it.
    if (!opened.unreadable_watermark.empty() || !opened.watermark || opened.watermark->snapshot) continue;
    RunSummary summary;
    summary.table = locks[i].table;
    summary.watermark_before = opened.watermark->value;
    summary.watermark_after = summary.watermark_before;
    const RunContext context{pipeline_, *members[i].table, state_, source_, target_, observer_, cancel_,
                             ownership_};
    auto planned = IncrementalRun(context).plan(opened.loaded_columns, summary);
    if (!planned || planned->first_step) continue;
    candidates.push_back(Candidate{i, std::move(summary), std::move(*planned)});
  }
  std::vector<Source::ProbeAsk> asks;
  for (const Candidate& c : candidates) {
    asks.push_back(Source::ProbeAsk{members[c.member].table, &c.plan.columns.source, c.plan.windows.range()});
  }
  const auto probes = asks.empty() ? std::vector<Result<WindowProbe>>{} : source_.probe_all(asks);
  if (cancel_.cancelled()) {
    state_.unlock_all(held_locks);
    return out;
  }
  std::vector<QuietRun> quiet;
  std::vector<Candidate*> quiet_candidates;
  for (std::size_t c = 0; c < candidates.size(); ++c) {
    if (!probes[c]) continue;  // its own run fails it, or finds it can go on
    const WindowProbe& probe = *probes[c];
    Candidate& candidate = candidates[c];
    // Rows to load: its own run loads them. Without a range there is
    // nothing to load (the probe answers has_rows when it was not asked).
    if (probe.has_rows && candidate.plan.windows.range()) continue;
    RunSummary& summary = candidate.summary;
    summary.horizon.null_cursor_rows = probe.null_cursor_rows;
    summary.horizon.infinite_cursor_rows = probe.infinite_cursor_rows;
    const auto move = IncrementalRun::move_without_rows(candidate.plan.windows, summary.watermark_before);
    if (move) summary.watermark_after = move->next;
    summary.status = RunStatus::Success;
    const BatchMember& member = members[candidate.member];
    quiet.push_back(
        QuietRun{RunStart{summary.table, member.trigger, std::nullopt}, member.scheduled, read->at, move, run_end(summary)});
    quiet_candidates.push_back(&candidate);
  }
  const auto recorded = quiet.empty() ? Result<std::vector<QuietRunRecorded>>(std::vector<QuietRunRecorded>{})
                                      : state_.record_quiet_runs(quiet);
  state_.unlock_all(held_locks);
  if (!recorded) return out;
  for (std::size_t q = 0; q < quiet_candidates.size(); ++q) {
    // Not written: its lock or its watermark moved on; its own run finds out how.
    if (!(*recorded)[q].written) continue;
    RunSummary& summary = quiet_candidates[q]->summary;
    summary.run = (*recorded)[q].run;
    observer_.on_run_finished(summary);
    announce_to_dependents(*members[quiet_candidates[q]->member].table, summary, state_);
    out[quiet_candidates[q]->member] = summary;
  }
  return out;
}

}  // namespace tidemark
