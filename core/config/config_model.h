// The validated configuration: the daemon file and every pipeline file.
// Built only by ConfigParser, immutable afterwards and shared read-only
// (std::shared_ptr<const Config>) between the loop and the workers; a
// reload builds a new one.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/config/table_modes.h"
#include "core/time/cron_schedule.h"
#include "core/watermark/cursor_value.h"
#include "core/time/partition_calendar.h"
#include "core/text/sql_identifier.h"
#include "core/time/time_types.h"

namespace tidemark {

// Where a value came from, for messages about it. line and column are 1-based.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
};

enum class DsnSource { Inline, Environment, File };

struct ConnectionConfig {
  std::string name;
  DsnSource source = DsnSource::Inline;
  // The DSN itself (Inline), an environment variable name (Environment) or
  // a file path (File). Resolving the last two is the daemon's job.
  std::string value;
  // A hot standby's primary (another connection's name), where the safe
  // horizon is read; empty when none is configured.
  std::string primary;
  // How long a run waits for the standby to replay up to the primary's
  // position read with the horizon.
  std::chrono::seconds replay_timeout{60};
};

// The TLS versions the endpoint may speak (exporter-toolkit's TLS12, TLS13).
enum class TlsVersion { Tls12, Tls13 };

// Whether the endpoint asks scrapers for a certificate, as exporter-toolkit
// names the policies (the ones that accept any certificate are refused).
enum class ClientAuth { NoClientCert, VerifyClientCertIfGiven, RequireAndVerifyClientCert };

// A file named in the web configuration, with where it was named.
struct WebConfigPath {
  std::string path;  // as written; the loader makes it relative to the web configuration's folder
  SourceLocation location;
  std::string key_path;  // e.g. "tls_server_config.cert_file"
};

// tls_server_config of a web configuration file.
struct TlsServerConfig {
  WebConfigPath cert_file;
  WebConfigPath key_file;
  std::optional<WebConfigPath> client_ca_file;  // with a Verify* client_auth_type only
  ClientAuth client_auth = ClientAuth::NoClientCert;
  TlsVersion min_version = TlsVersion::Tls12;
  TlsVersion max_version = TlsVersion::Tls13;
};

// One entry of basic_auth_users: a user and the bcrypt hash of its password.
struct BasicAuthUser {
  std::string name;
  std::string bcrypt_hash;  // $2a$, $2b$ or $2y$, checked for shape
};

// A Prometheus exporter web configuration file (metrics.web_config): TLS
// and basic auth for /metrics, /healthz and /readyz alike.
struct WebConfig {
  std::string file;                   // as shown in messages
  std::optional<TlsServerConfig> tls;  // absent: plain HTTP
  std::vector<BasicAuthUser> users;   // empty: no password asked
};

struct MetricsConfig {
  std::string listen;  // as written, "host:port"
  std::string host;    // without brackets for IPv6
  std::uint16_t port = 0;
  std::string web_config;  // as written; relative to the daemon file's folder; empty: none
  SourceLocation web_config_location;  // where web_config is written, for messages about the file
  // The web configuration read from web_config: set by the loader.
  std::optional<WebConfig> web;
};

enum class LogLevel { Trace, Debug, Info, Warn, Error, Off };
enum class LogFormat { Text, Json };

struct LogConfig {
  LogLevel level = LogLevel::Info;
  LogFormat format = LogFormat::Text;
};

// What the run history keeps.
struct HistoryConfig {
  // Run rows that started longer ago are pruned, but never one that
  // status, the alerts or the catch-up rule still read (RunHistoryPruner).
  std::chrono::seconds retention{0};
};

// How replicas share the tables (tidemark.members).
struct FleetConfig {
  // How long a member's registration lasts unless renewed, on the state
  // database's clock. It renews every third of it, so a member that dies
  // loses its tables within about one lease.
  std::chrono::seconds lease{6};
  // The members the fleet should have; 0 when not said (no alert).
  int expect_members = 0;
};

struct DaemonConfig {
  std::string file;
  std::string state;  // names one of connections
  std::vector<ConnectionConfig> connections;
  std::string pipelines_dir;  // as written; relative to the file's folder
  MetricsConfig metrics;
  int max_concurrent_runs = 0;
  std::chrono::seconds shutdown_grace{0};  // how long SIGTERM waits for runs in flight
  LogConfig log;
  HistoryConfig history;
  FleetConfig fleet;

  // nullptr when no connection has that name.
  const ConnectionConfig* find_connection(const std::string& wanted) const;
};

// What an incremental run does when the source's columns no longer match
// what the table loads (docs/drift-and-deletes.md).
enum class SchemaChangePolicy { Fail, AppendNewColumns };

struct PartitionSpec {
  std::string column;
  PartitionUnit unit = PartitionUnit::Day;
};

enum class DeleteAction { Delete, Mark };

// `deletes:` of an incremental table: when reconcile compares the key sets
// of source and target, and what it does to a target row whose key left
// the source (docs/drift-and-deletes.md).
struct DeletesConfig {
  std::optional<CronSchedule> reconcile;  // always set once valid
  DeleteAction action = DeleteAction::Delete;
  std::string mark_column;  // action Mark only: a timestamptz target column
  SourceLocation location;  // of the deletes: map, for messages about it
  std::string key_path;     // e.g. "tables[0].deletes"
};

// `ranges:` of a snapshot table (or its pipeline's default): a first load
// of a source table at least `above` bytes big (heap and TOAST) is read
// as ranges of its pages, about `size` bytes each, every range committed
// by itself, so that a failed first load starts again where it stopped,
// up to `workers` of them at once (docs/engine.md, "Ranged first loads").
struct LoadRanges {
  std::int64_t above = std::int64_t{1} << 30;
  std::int64_t size = std::int64_t{256} << 20;
  int workers = 2;
};

// A configured table named by another (`inputs:`), as the parser resolved
// "pipeline.table": its mode, and its pipeline's zone, the zone a
// timestamp or date watermark of it is read in.
struct TableRef {
  std::string pipeline;
  std::string table;
  TableMode mode = TableMode::Incremental;
  const TimeZone* zone = nullptr;  // never null once resolved
  CursorSpan lookback{};           // its own lookback: what it claims stops that far below its watermark

  std::string display() const { return pipeline + "." + table; }
};

struct TableConfig {
  std::string name;  // unique within the pipeline; state key is (pipeline, name)
  TableMode mode = TableMode::Incremental;
  SourceLocation location;

  // Where `mode` is written, for messages about the mode; empty when it is not.
  SourceLocation mode_location;
  std::string mode_key_path;

  std::optional<QualifiedName> source_table;  // incremental and snapshot
  QualifiedName target_table;
  std::vector<std::string> columns;  // empty: every source column
  SchemaChangePolicy on_schema_change = SchemaChangePolicy::Fail;  // incremental and snapshot
  std::vector<std::string> key;      // incremental and snapshot
  std::string cursor;                // incremental only
  CursorSpan lookback;
  std::optional<CursorSpan> max_window;
  std::optional<std::string> initial;  // ISO-8601 date/timestamp or an integer
  std::optional<CronSchedule> schedule;  // own, or the pipeline's; always set once valid
  std::chrono::seconds stale_after{0};   // own, or the pipeline's
  std::optional<PartitionSpec> partition;  // partition only
  std::string query;                       // partition only; $1 = lo, $2 = hi
  std::optional<DeletesConfig> deletes;    // incremental and partition
  // Incremental and partition: the tables whose targets this table's
  // source reads, which its safe horizon waits for (docs/partitions.md,
  // "Marts"); resolved by the parser, in the order written.
  std::vector<TableRef> inputs;
  // `inputs:` as written ("pipeline.table"), with where each item is, for
  // the parser to resolve once every file is read.
  struct WrittenInput {
    std::string name;
    SourceLocation location;
    std::string key_path;
  };
  std::vector<WrittenInput> inputs_written;
  // The tables that name this one in their inputs: woken when it moves,
  // told when rows it loaded below their work change. Set by the parser.
  std::vector<TableRef> dependents;
  // Incremental and snapshot: the first run creates a missing target table
  // from the source's columns (own, or the pipeline's default).
  bool create_target = false;
  bool create_target_set = false;  // written on the table itself
  // Snapshot: how a big first load is split: each key its own, or the
  // pipeline's.
  LoadRanges ranges;
  bool ranges_above_set = false;  // written on the table itself
  bool ranges_size_set = false;
  bool ranges_workers_set = false;
};

struct PipelineConfig {
  std::string name;
  SourceLocation location;
  std::string source;  // connection names
  std::string target;
  std::optional<CronSchedule> schedule;  // default for tables; may be absent if each table has one
  std::string timezone;                  // IANA name
  const TimeZone* zone = nullptr;        // from the tz database; never null once valid
  std::chrono::seconds stale_after{0};
  bool create_target = false;  // the default of its tables that read a source table
  LoadRanges ranges;           // the default of its snapshot tables
  std::vector<TableConfig> tables;

  const TableConfig* find_table(const std::string& wanted) const;
};

struct Config {
  DaemonConfig daemon;
  std::vector<PipelineConfig> pipelines;  // sorted by name

  const PipelineConfig* find_pipeline(const std::string& wanted) const;
  // Why `job` ("a reconcile", "a snapshot run"), which makes the whole
  // target table of `table` equal to its source, must not run: the other
  // tables that load, or may load, into that target table (shards), whose
  // rows it would delete as gone from this table's source, named. Nothing
  // when the target table is its own. An unqualified name counts as the
  // same as a qualified one of that name.
  std::optional<std::string> whole_target_conflict(const PipelineConfig& pipeline, const TableConfig& table,
                                                   const std::string& job) const;
};

}  // namespace tidemark
