// The Source over a source database connection: inspects the table and
// reads what the safe horizon is decided from (the source's clock, its
// largest cursor, its open transactions), on the primary when the source
// is a standby with one. Owns nothing; used by one run on one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "core/run/run_ports.h"
#include "core/text/sql_identifier.h"
#include "daemon/pg/data/shared_reads.h"
#include "daemon/pg/libpq/pg_connection.h"

namespace tidemark {

class CancelToken;

// SQL expressions a run's horizon reads and validate checks beforehand.
// `table` is an SQL expression of type regclass, `column` one of type
// text (a column name). The logical replication subscription that writes
// the table (text, NULL when none):
std::string subscription_sql(const std::string& table);
// The largest CACHE of the sequences the column takes its ids from
// (bigint, NULL when none):
std::string sequence_cache_sql(const std::string& table, const std::string& column);

// How many rows `table` holds by the source's statistics (the sum of its
// partitions' for a partitioned table): what a progress line measures a
// first load against. Nothing when the statistics do not say (never
// analyzed, or no such table). Throws PgError.
std::optional<std::int64_t> estimated_rows(PgConnection& source, const QualifiedName& table);

// A hot standby's primary, where the horizon is read.
struct PrimaryLink {
  PgConnection* connection = nullptr;  // null: none configured
  std::chrono::seconds replay_timeout{60};
  const CancelToken* cancel = nullptr;  // stops the wait for replay early
};

class PgSource final : public Source {
 public:
  // `warn`, when given, receives a message that deserves one log line per
  // process, such as missing permission to see other sessions' transactions.
  // `shared`, when given, keeps what inspect() reads while the table's
  // catalog rows stay unchanged, and the source's horizon readings for a
  // moment (SourceMoments).
  explicit PgSource(PgConnection& connection, std::function<void(const std::string&)> warn = nullptr,
                    PrimaryLink primary = {}, SharedReads* shared = nullptr)
      : connection_(connection), warn_(std::move(warn)), primary_(primary), shared_(shared) {}

  Result<SourceTable> inspect(const TableConfig& table) override;
  // Reads the catalog versions of `tables`' source tables in one statement,
  // which inspect() then takes instead of asking for each; when that
  // fails, inspect() asks for each as before.
  void about_to_inspect(const std::vector<const TableConfig*>& tables) override;
  Result<HorizonReading> read_horizon(const TableConfig& table, CursorType type,
                                      std::optional<SourceMicros> shared_after) override;
  Result<CursorValue> cursor_at(SourceMicros instant, CursorType type) override;
  Result<std::optional<CursorValue>> lower_bound(const TableConfig& table, CursorType type) override;
  Result<std::optional<std::int64_t>> count_changes(const TableConfig& table) override;
  Result<std::optional<TableExtent>> measure(const TableConfig& table, const SourceTable& source) override;
  // On the run's session: write_range's COPYs read in its transaction.
  Result<std::optional<HeldSnapshot>> open_snapshot(const TableConfig& table, const SourceTable& source) override;
  void close_snapshot() override;
  Result<WindowProbe> probe(const TableConfig& table, const SourceTable& source,
                            const std::optional<Window>& range) override;
  // Every probe in one statement, which takes every table's lock before its snapshot.
  std::vector<Result<WindowProbe>> probe_all(const std::vector<ProbeAsk>& asks) override;

  PgConnection& connection() { return connection_; }

  // The source's clock now (clock_timestamp()) in a time cursor's type: a
  // timestamp or date in the session's time zone, as runs compare cursors.
  // What a watermark set by hand (`tidemark rewind`) must not pass.
  Result<CursorValue> clock_now(CursorType type);
  // How many of `table`'s source rows have a cursor at or above `from`:
  // what a run re-reads from there.
  Result<std::int64_t> rows_from(const TableConfig& table, const CursorValue& from);

 private:
  // read_horizon() without a shared reading.
  Result<HorizonReading> read_fresh_horizon(const TableConfig& table, CursorType type);
  // What inspect() returns, read from the catalogs.
  Result<SourceTable> read_table(const TableConfig& table);
  // Where a reading was taken: a standby and its primary: must be one
  // database of one cluster.
  struct Origin {
    bool in_recovery = false;
    std::string database;
    std::string system_identifier;
  };
  // The clock (after max(cursor) for integer cursors), whether this role
  // sees every session, the standby's replay state and, for integer
  // cursors, its sequence's CACHE, as read on `on`; `origin` says where
  // that was. Throws.
  HorizonReading read_clock(PgConnection& on, const TableConfig& table, CursorType type, Origin& origin);
  // Sets out.oldest, the oldest open transaction on `on` that may still
  // write, and out.unreported_session. Throws.
  void read_open_transactions(PgConnection& on, HorizonReading& out);
  // The primary's WAL position that the standby must replay to show every
  // transaction that had ended when the open ones were listed. Throws.
  std::string primary_position(PgConnection& primary);
  // Waits until this standby has replayed the primary's WAL up to `lsn`. Throws.
  void wait_for_replay(const std::string& lsn);
  void warn_once(const std::string& message);

  PgConnection& connection_;
  std::function<void(const std::string&)> warn_;
  PrimaryLink primary_;
  SharedReads* shared_;
  std::optional<RelationVersions> versions_;  // read_versions()'s
};

}  // namespace tidemark
