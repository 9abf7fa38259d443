#include "daemon/state_monitor.h"

#include <spdlog/spdlog.h>

#include "core/cursor_value.h"
#include "daemon/command_support.h"
#include "daemon/state_schema.h"

namespace tidemark {
namespace {

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::optional<double> optional_double(const PgResult& r, int row, int column) {
  if (r.is_null(row, column)) return std::nullopt;
  return std::stod(r.text(row, column));
}

}  // namespace

void StateMonitor::start(std::shared_ptr<const Config> config) {
  set_config(std::move(config));
  thread_ = std::thread([this] { loop(); });
}

void StateMonitor::set_config(std::shared_ptr<const Config> config) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    config_ = std::move(config);
    poked_ = true;
  }
  wake_.notify_one();
}

void StateMonitor::poke() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    poked_ = true;
  }
  wake_.notify_one();
}

void StateMonitor::stop() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void StateMonitor::loop() {
  for (;;) {
    std::shared_ptr<const Config> config;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait_for(lock, interval_, [this] { return stopping_ || poked_; });
      if (stopping_) return;
      poked_ = false;
      config = config_;
    }
    refresh(*config);
  }
}

void StateMonitor::refresh(const Config& config) {
  for (const ConnectionConfig& c : config.daemon.connections) {
    if (c.name == config.daemon.state) continue;  // tried below, where it is used
    try {
      connect_to(config, c.name);
      metrics_.database_up(c.name, true);
    } catch (const std::exception& e) {
      metrics_.database_up(c.name, false);
      spdlog::debug("connection {} is down: {}", c.name, e.what());
    }
  }
  try {
    const auto state = connect_to(config, config.daemon.state);
    metrics_.database_up(config.daemon.state, true);
    if (!migrated_) {
      migrate_state_schema(*state);
      migrated_ = true;
    }
    // Per table: its watermark (or the end of its last done partition),
    // when that last moved, and when its last successful run finished.
    std::vector<std::string> pipelines, tables;
    for (const PipelineConfig& p : config.pipelines) {
      for (const TableConfig& t : p.tables) {
        pipelines.push_back(p.name);
        tables.push_back(t.name);
      }
    }
    const auto array = [](const std::vector<std::string>& items) {
      std::string out = "{";
      for (const std::string& i : items) {
        out += (out.size() > 1 ? "," : "") + std::string("\"");
        for (char c : i) out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
        out += "\"";
      }
      return out + "}";
    };
    const PgResult r = state->exec(R"SQL(
select t.pipeline, t.table_name, w.value, w.value_type,
       extract(epoch from coalesce(w.moved_at, p.moved_at))::float8,
       extract(epoch from p.partition_hi)::float8,
       extract(epoch from s.finished_at)::float8,
       coalesce(a.watermark_ahead, false)
from unnest($1::text[], $2::text[]) as t(pipeline, table_name)
left join tidemark.watermarks w on w.pipeline = t.pipeline and w.table_name = t.table_name
left join lateral (select max(partition_hi) as partition_hi, max(updated_at) as moved_at from tidemark.partitions
                   where pipeline = t.pipeline and table_name = t.table_name and status = 'done') p on true
left join lateral (select finished_at from tidemark.runs where pipeline = t.pipeline and table_name = t.table_name
                   and status = 'success' order by run_id desc limit 1) s on true
left join lateral (select watermark_ahead from tidemark.runs where pipeline = t.pipeline
                   and table_name = t.table_name and status <> 'running' order by run_id desc limit 1) a on true
)SQL",
                                   {array(pipelines), array(tables)});
    const double now = unix_now();
    for (int i = 0; i < r.rows(); ++i) {
      TableProgress progress;
      if (!r.is_null(i, 2)) {
        const auto value = cursor_from_stored(r.text(i, 3), r.text(i, 2));
        if (value) progress.watermark_unix = cursor_unix_seconds(*value);
      }
      if (!progress.watermark_unix) progress.watermark_unix = optional_double(r, i, 5);
      progress.moved_unix = optional_double(r, i, 4);
      progress.last_success_unix = optional_double(r, i, 6);
      progress.ahead = r.boolean(i, 7);
      metrics_.table_progress({r.text(i, 0), r.text(i, 1)}, progress, now);
    }
  } catch (const std::exception& e) {
    metrics_.database_up(config.daemon.state, false);
    spdlog::warn("cannot read the state database {}: {}", config.daemon.state, e.what());
  }
}

}  // namespace tidemark
