#include "daemon/serve/job_runner.h"

#include <cstdlib>

#include "core/config/table_modes.h"
#include "core/reconcile/partition_repair.h"
#include "core/run/input_horizon.h"
#include "core/run/load_batch.h"
#include "core/run/table_run.h"
#include "core/schedule/job_kinds.h"

namespace tidemark {
namespace {

// Hears the run rows a job closes, for its end, and passes its progress on.
class RunsHeard final : public RunObserver {
 public:
  RunsHeard(RunObserver& progress, RunMeter& meter) : progress_(progress), meter_(meter) {}

  void on_chunk_committed(const TableKey& table, const Window& window, const ChunkCounts& counts,
                          const CursorValue& watermark) override {
    progress_.on_chunk_committed(table, window, counts, watermark);
  }
  void on_horizon(const TableKey& table, const HorizonReport& horizon) override {
    progress_.on_horizon(table, horizon);
  }
  void on_range_committed(const TableKey& table, const LoadRange& range, int done, int all,
                          const ChunkCounts& counts) override {
    meter_.set_ranges(done, all);
    progress_.on_range_committed(table, range, done, all, counts);
  }
  void on_run_finished(const RunSummary& summary) override { heard_.push_back(summary); }

  // The runs of `table` heard so far, in order; taken out.
  std::vector<RunSummary> take(const TableKey& table) {
    std::vector<RunSummary> out;
    std::vector<RunSummary> rest;
    for (RunSummary& s : heard_) (s.table == table ? out : rest).push_back(std::move(s));
    heard_ = std::move(rest);
    return out;
  }

 private:
  RunObserver& progress_;
  RunMeter& meter_;
  std::vector<RunSummary> heard_;
};

std::chrono::milliseconds since(std::chrono::steady_clock::time_point started) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
}

// From the firing `member` serves to `started`; nothing when run by hand.
std::optional<std::chrono::duration<double>> start_delay(const JobMember& member,
                                                         std::chrono::system_clock::time_point started) {
  if (!member.scheduled) return std::nullopt;
  return started - std::chrono::system_clock::time_point(member.scheduled->time_since_epoch());
}

}  // namespace

Job load_job(const PipelineConfig& pipeline, const TableConfig& table, RunTrigger trigger,
             std::optional<Instant> scheduled) {
  Job job;
  job.kind = JobKind::Load;
  job.pipeline = &pipeline;
  job.members.push_back(JobMember{&table, trigger, scheduled});
  return job;
}

Job reconcile_job(const PipelineConfig& pipeline, const TableConfig& table, const ReconcileRequest& request,
                  std::optional<Instant> scheduled) {
  Job job;
  job.kind = JobKind::Reconcile;
  job.pipeline = &pipeline;
  job.members.push_back(JobMember{&table, request.trigger, scheduled});
  job.reconcile = request;
  return job;
}

std::vector<std::optional<JobEnded>> JobRunner::run(const Job& job, const CancelToken& cancel) {
  if (job.pipeline == nullptr || job.members.empty()) std::abort();
  if (job.members.size() > 1 && !job_kind(job.kind).batches) std::abort();  // the scheduler batches loads only
  const auto key = [&job](const JobMember& member) { return TableKey{job.pipeline->name, member.table->name}; };
  RunMeter meter;  // outlives every end told below
  for (const JobMember& member : job.members) ends_.job_started(key(member), job.kind, meter);
  const auto started = std::chrono::steady_clock::now();
  const auto started_at = std::chrono::system_clock::now();
  RunsHeard runs(progress_, meter);
  std::vector<std::optional<JobEnded>> out;
  if (job.members.size() > 1) {
    out = batch(job, cancel, runs, meter);
  } else {
    switch (job.kind) {
      case JobKind::Load: out.emplace_back(load(job, cancel, runs, meter)); break;
      case JobKind::Reconcile: out.emplace_back(reconcile(job, cancel, runs, meter)); break;
    }
  }
  if (out.size() != job.members.size()) std::abort();  // one end a member
  const auto duration = since(started);
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (!out[i]) {
      ends_.job_handed_back(key(job.members[i]), job.kind);
      continue;
    }
    JobEnded& ended = *out[i];
    ended.kind = job.kind;
    ended.runs = runs.take(ended.summary.table);
    // Every run of a batch started with it and ended with it.
    ended.duration = duration;
    ended.start_delay = start_delay(job.members[i], started_at);
    ended.batch_size = job.members.size();
    ends_.job_ended(ended);
  }
  return out;
}

JobEnded JobRunner::run_one(const Job& job, const CancelToken& cancel) {
  if (job.members.size() != 1) std::abort();
  std::optional<JobEnded> ended = std::move(run(job, cancel).front());
  if (!ended) std::abort();  // only a batch hands a member back
  return std::move(*ended);
}

void JobRunner::prepare(JobPorts& ports, const JobMember& member) const {
  if (member.scheduled) ports.state().set_firing(*member.scheduled);
  if (fault_hook_ && ports.pg_target() != nullptr) ports.pg_target()->set_fault_hook(fault_hook_);
}

JobEnded JobRunner::load(const Job& job, const CancelToken& cancel, RunObserver& runs, RunMeter& meter) {
  const JobMember& member = job.members.front();
  const PipelineConfig& pipeline = *job.pipeline;
  const TableConfig& table = *member.table;
  JobEnded out;
  JobPorts ports(*config_, pipeline, sessions_, cancel, table_mode(table.mode).in_pipeline_time_zone, &meter);
  if (ports.state_unreachable()) {
    out.summary = ports.unrecorded_failure(TableKey{pipeline.name, table.name});
    runs.on_run_finished(out.summary);  // no run row says so: the end does
  } else {
    prepare(ports, member);
    out.summary = run_table(
        RunContext{pipeline, table, ports.state(), ports.source(), ports.target(), runs, cancel, ownership_,
                   ports.crew()},
        member.trigger);
  }
  return out;
}

std::vector<std::optional<JobEnded>> JobRunner::batch(const Job& job, const CancelToken& cancel, RunObserver& runs,
                                                      RunMeter& meter) {
  std::vector<std::optional<JobEnded>> out(job.members.size());
  JobPorts ports(*config_, *job.pipeline, sessions_, cancel, /*pipeline_time_zone=*/false, &meter);
  // Each run of its own records why.
  if (ports.state_unreachable() || ports.data_unreachable()) return out;
  std::vector<BatchMember> members;
  for (const JobMember& m : job.members) members.push_back(BatchMember{m.table, m.trigger, m.scheduled});
  const auto summaries =
      LoadBatch(*job.pipeline, ports.state(), ports.source(), ports.target(), runs, cancel, ownership_)
          .execute(members);
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (summaries[i]) out[i].emplace().summary = *summaries[i];
  }
  return out;
}

JobEnded JobRunner::reconcile(const Job& job, const CancelToken& cancel, RunObserver& runs, RunMeter& meter) {
  const JobMember& member = job.members.front();
  const PipelineConfig& pipeline = *job.pipeline;
  const TableConfig& table = *member.table;
  JobEnded out;
  out.dry_run = job.reconcile.dry_run;
  ReconcileReport& report = out.reconcile.emplace();
  const TableModeSpec& mode = table_mode(table.mode);
  JobPorts ports(*config_, pipeline, sessions_, cancel, mode.in_pipeline_time_zone, &meter);
  if (ports.state_unreachable()) {
    report.run = ports.unrecorded_failure(TableKey{pipeline.name, table.name});
  } else {
    prepare(ports, member);
    // Its own run row is not heard (its report carries its counts, and the
    // row feeds its own gauges); the partitions it writes again are runs.
    const RunContext context{pipeline, table, ports.state(), ports.source(), ports.target(), runs, cancel,
                             ownership_};
    if (mode.reconcile == ReconcileBy::Partitions) {
      report = PartitionRepair(context).execute(job.reconcile);
    } else {
      const auto [source_keys, target_keys] = ports.key_sides(table);
      report = ReconcileRun(context, source_keys, target_keys).execute(job.reconcile);
    }
    announce_to_dependents(table, report.run, ports.state());
  }
  out.summary = report.run;
  return out;
}

}  // namespace tidemark
