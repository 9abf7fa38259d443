#include "daemon/serve/job_ports.h"

#include <cstdlib>

#include <spdlog/spdlog.h>

#include "core/reconcile/reconcile_run.h"
#include "core/sql/row_fingerprint.h"

namespace tidemark {

JobPorts::JobPorts(const Config& config, const PipelineConfig& pipeline, JobSessions from, const CancelToken& cancel,
                   bool pipeline_time_zone, RunMeter* meter)
    : connections_(from.pool, from.shared) {
  // Whatever kept a session from opening is transient: the database may
  // be back by the retry.
  try {
    connections_.open_state(config);
  } catch (const std::exception& e) {
    state_unreachable_ = Error{e.what()};
    return;
  }
  try {
    connections_.open_data(config, pipeline);
    if (pipeline_time_zone) connections_.use_pipeline_time_zone(pipeline);
  } catch (const std::exception& e) {
    data_unreachable_ = Error{e.what()};
    state_alone_.emplace(*connections_.state);
    missing_.emplace(*data_unreachable_);
    return;
  }
  reached_.emplace(connections_, cancel, [](const std::string& warning) { spdlog::warn("{}", warning); });
  crew_.emplace(config, pipeline, CrewSessions{from.pool, from.shared, from.places, meter}, reached_->source,
                reached_->state, cancel);
  if (meter != nullptr) {
    metered_ = connections_.source.get();
    metered_->attach_meter(meter);
  }
}

JobPorts::~JobPorts() {
  // Before the session goes back to the pool, where the next job's meter,
  // or none, is attached.
  if (metered_ != nullptr) metered_->attach_meter(nullptr);
}

RunSummary JobPorts::unrecorded_failure(const TableKey& table) const {
  if (!state_unreachable_) std::abort();  // a run with its state records its own failure
  RunSummary out;
  out.table = table;
  out.status = RunStatus::Failed;
  out.error = state_unreachable_->message;
  out.error_kind = state_unreachable_->kind;
  return out;
}

PgStateStore& JobPorts::state() {
  if (state_unreachable_) std::abort();  // no port without the state
  return reached_ ? reached_->state : *state_alone_;
}

Source& JobPorts::source() {
  if (state_unreachable_) std::abort();
  if (reached_) return reached_->source;
  return *missing_;
}

Target& JobPorts::target() {
  if (state_unreachable_) std::abort();
  if (reached_) return reached_->target;
  return *missing_;
}

std::pair<KeySide&, KeySide&> JobPorts::key_sides(const TableConfig& table) {
  if (state_unreachable_ || source_keys_) std::abort();  // one reconcile a job, with its state
  if (!reached_) return {*missing_, *missing_};
  const bool hash_record =
      hash_record_between(connections_.source->server_major_version(), connections_.target().server_major_version());
  source_keys_.emplace(*connections_.source, table, PgKeySide::Role::Source, hash_record);
  target_keys_.emplace(connections_.target(), table, PgKeySide::Role::Target, hash_record,
                       reconcile_mark_column(table));
  keys_together_.emplace(std::initializer_list<PgConnection*>{connections_.source.get(), &connections_.target()});
  return {*source_keys_, *target_keys_};
}

}  // namespace tidemark
