// The sessions a run, a command or the daemon opens by connection name:
// one connection (a source's read only), or the set one run of a
// pipeline's table uses, from a pool or opened here. Used by serve and the
// commands alike; each object on one thread.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "core/config/config_model.h"
#include "core/run/cancel_token.h"
#include "daemon/pg/data/pg_source.h"
#include "daemon/pg/data/shared_reads.h"
#include "daemon/pg/libpq/connection_pool.h"
#include "daemon/pg/libpq/pg_connection.h"

namespace tidemark {

// Opens a named connection. Throws std::runtime_error or PgError.
std::unique_ptr<PgConnection> connect_to(const Config& config, const std::string& connection_name);

// Opens a named connection as a source: every transaction on it is read
// only (make_read_only_source). Throws std::runtime_error or PgError.
std::unique_ptr<PgConnection> connect_to_source(const Config& config, const std::string& connection_name);

// The connections one run of a pipeline's table uses: the state database
// (which holds the lock), the source, and the target unless it is the
// state database, in which case the load and the state commit together.
//
// With a pool the sessions come from it and go back to it when these are
// reset or destroyed; without one they are opened and closed here. With
// shared reads the source and target ports keep what they read there for
// other runs (the catalogs' answers, the sources' recent horizons).
struct PipelineConnections {
  explicit PipelineConnections(ConnectionPool* from = nullptr, SharedReads* reads = nullptr)
      : pool(from), shared(reads) {}

  ConnectionPool* pool;
  SharedReads* shared;
  PooledConnection state;
  PooledConnection source;
  PooledConnection separate_target;  // empty: the target is the state database
  PooledConnection source_primary;   // the source's primary, when it names one
  std::chrono::seconds replay_timeout{60};

  PgConnection& target() { return separate_target ? *separate_target : *state; }
  // The Source port over these connections; requires open_data.
  PgSource make_source(std::function<void(const std::string&)> warn = nullptr, const CancelToken* cancel = nullptr) {
    return PgSource(*source, std::move(warn), PrimaryLink{source_primary.get(), replay_timeout, cancel}, shared);
  }
  // Opens the state connection. Throws.
  void open_state(const Config& config);
  // Opens the source and, when separate, the target; and the source's
  // primary when it names one, unless `with_primary` is false (a range
  // helper, which only reads in a snapshot it is given). Throws.
  void open_data(const Config& config, const PipelineConfig& pipeline, bool with_primary = true);
  // For a partition table's query: the source and the target read in the
  // pipeline's time zone, where its partitions are days (or hours, or
  // months), so that the query's $1 and $2, dates or wall times, stand for
  // the instants the partition means whatever the source database's own
  // zone. Requires open_data (and the state, when it is the target). Throws.
  void use_pipeline_time_zone(const PipelineConfig& pipeline);

 private:
  // Once both are open, the target takes the source's time zone
  // (PgConnection::adopt_time_zone). Throws.
  void follow_source_time_zone();
};

}  // namespace tidemark
