#include "daemon/pg/data/table_snapshot.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "core/run/schema_drift.h"
#include "daemon/pg/libpq/pg_error.h"

namespace tidemark {

CursorValue snapshot_clock(const PgResult& clock) {
  if (clock.is_null(0, 0)) {
    throw PgError(ErrorKind::Transient, "the source is a standby that has replayed no transaction yet");
  }
  return CursorValue{CursorType::TimestampTz, std::stoll(clock.text(0, 0))};
}

std::int64_t past_this_transaction(PgConnection& target) {
  return std::stoll(target.exec("SELECT pg_current_xact_id()::text").text(0, 0)) + 1;
}

bool begin_table_snapshot(PgConnection& source, const TableConfig& table, const SourceTable& table_read,
                          const LoadStatements& sql, const CancelToken& cancel) {
  source.exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  try {
    if (table_read.kind != RelationKind::ForeignTable) {
      try {
        source.exec("LOCK TABLE " + table.source_table->quoted() + " IN ACCESS SHARE MODE", cancel);
      } catch (const PgError& e) {
        if (e.sqlstate() != "42501") throw;
        source.rollback_quietly();
        return false;
      }
    }
    const PgResult read = source.exec(sql.source_columns);
    std::vector<ColumnShape> now;
    for (int i = 0; i < read.rows(); ++i) now.push_back(ColumnShape{read.text(i, 0), read.text(i, 1)});
    if (const auto changed =
            changed_while_read(table.source_table->display(), table_read.columns, table_read.catalog, now)) {
      throw PgError(ErrorKind::Transient, *changed);
    }
    return true;
  } catch (...) {
    source.rollback_quietly();
    throw;
  }
}

namespace {

// A shared snapshot's transactions sit idle while others work (the
// exporter while its helpers read, a helper while its target upserts):
// the server's timeouts for idle or long transactions must not end them.
void keep_transaction_open(PgConnection& session) {
  session.exec(session.server_major_version() >= 17
                   ? "SET LOCAL idle_in_transaction_session_timeout = 0; SET LOCAL transaction_timeout = 0"
                   : "SET LOCAL idle_in_transaction_session_timeout = 0");
}

}  // namespace

std::string export_snapshot(PgConnection& source) {
  keep_transaction_open(source);
  return source.exec("SELECT pg_export_snapshot()").text(0, 0);
}

void join_snapshot(PgConnection& helper, const std::string& name) {
  // SET TRANSACTION SNAPSHOT takes no parameter: the name goes in as a
  // literal, which the server's names (hex digits and dashes) are safe as.
  const bool plain = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isxdigit(static_cast<unsigned char>(c)) != 0 || c == '-';
  });
  if (!plain) std::abort();  // not a name pg_export_snapshot returns
  helper.exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  try {
    helper.exec("SET TRANSACTION SNAPSHOT '" + name + "'");
    keep_transaction_open(helper);
  } catch (const PgError& e) {
    helper.rollback_quietly();
    // The exporting transaction ended (its session gone), or this session
    // reached another server than the exporter's (a DSN of several hosts).
    if (e.sqlstate() == "22023") {
      throw PgError(ErrorKind::Transient, std::string(e.what()) +
                                              " (the session holding the load's snapshot ended, or this one reached "
                                              "another server)");
    }
    throw;
  }
}

}  // namespace tidemark
