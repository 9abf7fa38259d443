#include "daemon/pg/data/pg_source.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <mutex>
#include <set>
#include <thread>

#include "core/run/cancel_token.h"
#include "core/sql/load_statements.h"
#include "core/text/plain_text.h"
#include "core/text/sql_identifier.h"
#include "daemon/pg/data/relation_catalog.h"
#include "daemon/pg/data/table_snapshot.h"
#include "daemon/pg/libpq/source_session.h"

namespace tidemark {
namespace {

// A SQL expression turning `expr` (of the cursor's type) into the integer
// CursorValue::raw holds.
std::string raw_of(CursorType type, const std::string& expr) {
  switch (type) {
    case CursorType::TimestampTz:
    case CursorType::Timestamp: return "(extract(epoch from " + expr + ") * 1000000)::bigint";
    case CursorType::Date: return "(" + expr + " - date '1970-01-01')";
    case CursorType::Integer: return "(" + expr + ")::bigint";
  }
  return expr;
}

// pg_class.relkind of a table that can be read.
RelationKind relation_kind(const std::string& relkind) {
  if (relkind == "v") return RelationKind::View;
  if (relkind == "m") return RelationKind::MaterializedView;
  if (relkind == "f") return RelationKind::ForeignTable;
  return RelationKind::Table;  // r (with inheritance children or not), p
}

// A hint for a name not found that differs from one in `names` only in
// case: YAML names fold to lower case unless quoted, as in SQL.
std::string quoting_hint(const std::vector<std::string>& names, const std::string& wanted) {
  for (const std::string& n : names) {
    if (n != wanted && ascii_lower(n) == ascii_lower(wanted)) {
      return " (it has " + quote_identifier(n) + ": a name that is not all lower case is written quoted in YAML, '" +
             quote_identifier(n) + "')";
    }
  }
  return {};
}

std::optional<CursorValue> optional_value(const PgResult& r, CursorType type) {
  if (r.is_null(0, 0)) return std::nullopt;
  return CursorValue{type, r.integer(0, 0)};
}

// Names one after another, each ended by a unit separator, which no
// identifier holds.
std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += n + '\x1f';
  return out;
}

}  // namespace

Result<SourceTable> PgSource::inspect(const TableConfig& table) {
  if (shared_ == nullptr) return read_table(table);
  // What the answer depends on besides the catalogs.
  const std::string config = table.cursor + '\n' + joined(table.columns) + '\n' + joined(table.key);
  return shared_->catalogs.source(connection_, *table.source_table, config, [&] { return read_table(table); },
                                  versions_ ? &*versions_ : nullptr);
}

void PgSource::about_to_inspect(const std::vector<const TableConfig*>& tables) {
  std::vector<QualifiedName> relations;
  for (const TableConfig* t : tables) relations.push_back(*t->source_table);
  try {
    versions_ = relation_versions(connection_, relations);
  } catch (const PgError&) {
    versions_.reset();  // each inspect() asks on its own, and fails there if it must
  }
}

Result<SourceTable> PgSource::read_table(const TableConfig& table) {
  return as_result([&]() -> Result<SourceTable> {
    const std::string name = table.source_table->display();
    const PgResult r = connection_.exec_prepared(
        "select a.attname, format_type(a.atttypid, a.atttypmod), c.oid is not null, " + validated_not_null_sql("a") +
            ", " + std::string(kPortableBinarySql) +
            ", (select relkind from pg_class where oid = c.oid), " +
            unique_indexes_sql("to_regclass($1)", connection_.server_major_version()) +
            ", a.atthasdef or a.attidentity <> '' or a.attgenerated <> '', " +
            row_changing_triggers_sql("to_regclass($1)") + ", " + subscription_sql("c.oid") +
            ", a.attidentity <> '' or coalesce((select pg_get_expr(d.adbin, d.adrelid) from pg_attrdef d"
            " where d.adrelid = a.attrelid and d.adnum = a.attnum), '') like 'nextval(%', " +
            nondeterministic_collation_sql("a") + ", " + enum_labels_sql("a") +
            " from (select to_regclass($1) as oid) c"
            " left join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped"
            " left join pg_type t on t.oid = a.atttypid"
            " order by a.attnum",
        {table.source_table->quoted()});
    if (r.rows() == 0 || r.is_null(0, 0)) {
      // One of another case, found to say so.
      const QualifiedName& wanted = *table.source_table;
      const PgResult like = connection_.exec(
          "select n.nspname, c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace"
          " where lower(c.relname) = lower($1) and ($2::text is null or lower(n.nspname) = lower($2))"
          " and c.relkind in ('r', 'p', 'v', 'm', 'f') order by 1, 2 limit 1",
          {wanted.name(), wanted.schema()});
      std::string hint;
      if (like.rows() > 0) {
        const std::string found = QualifiedName(like.text(0, 0), like.text(0, 1)).display();
        hint = " (there is " + found + ": a name that is not all lower case is written quoted in YAML, '" + found +
               "')";
      }
      return permanent_error("source table " + name + " does not exist (or is not visible to this role)" + hint);
    }
    SourceTable out;
    out.kind = relation_kind(r.text(0, 5));
    out.unique_indexes = parse_unique_indexes(r.text(0, 6));
    if (!r.is_null(0, 9)) out.subscription = r.text(0, 9);
    std::vector<std::string> all;
    std::string cursor_type;
    for (int i = 0; i < r.rows(); ++i) {
      all.push_back(r.text(i, 0));
      ColumnShape column{r.text(i, 0), r.text(i, 1), r.boolean(i, 4)};
      column.not_null = r.boolean(i, 3);
      if (!r.is_null(i, 11)) column.nondeterministic_collation = r.text(i, 11);
      if (!r.is_null(i, 12)) parse_enum_labels(r.text(i, 12), column);
      out.catalog.push_back(column);
      if (all.back() == table.cursor) {
        cursor_type = r.text(i, 1);
        out.cursor_stamped_by_database = r.boolean(i, 7) || !parse_row_triggers(r.text(i, 8)).empty();
        out.cursor_insert_only = r.boolean(i, 10);
        // A NOT NULL that holds (not NOT VALID); a foreign table's
        // remote rows need not meet one.
        out.cursor_never_null = column.not_null && (out.kind == RelationKind::Table);
      }
    }
    // A snapshot table has no cursor: its watermark is the source's clock.
    if (!table.cursor.empty()) {
      if (cursor_type.empty()) {
        return permanent_error("source table " + name + " has no cursor column " + table.cursor +
                               quoting_hint(all, table.cursor));
      }
      const auto type = cursor_type_from_postgres(cursor_type);
      if (!type) return permanent_error("source table " + name + ": " + type.error());
      out.cursor_type = *type;
      out.cursor_fraction_digits = cursor_fraction_digits(cursor_type);
    }
    // A configured column the source lacks may have been dropped: the
    // run's schema check (core/run/schema_drift.h) says which.
    out.columns = table.columns.empty() ? all : table.columns;
    for (const std::string& k : table.key) {
      if (std::find(all.begin(), all.end(), k) == all.end()) {
        return permanent_error("source table " + name + " has no key column " + k + quoting_hint(all, k));
      }
    }
    return out;
  });
}

// The subscription's name through pg_stat_subscription, which lists every
// subscription: PostgreSQL 12 lets roles other than a superuser read no
// oid of pg_subscription itself.
std::optional<std::int64_t> estimated_rows(PgConnection& source, const QualifiedName& table) {
  // reltuples is -1 before a first ANALYZE from PostgreSQL 14, 0 before it.
  const PgResult r = source.exec(
      "select case when c.relkind = 'p' then (select sum(greatest(pc.reltuples, 0)) from pg_partition_tree(c.oid) pt"
      " join pg_class pc on pc.oid = pt.relid where pt.isleaf) else c.reltuples end::bigint"
      " from pg_class c where c.oid = to_regclass($1)",
      {table.quoted()});
  if (r.rows() == 0 || r.is_null(0, 0) || r.integer(0, 0) <= 0) return std::nullopt;
  return r.integer(0, 0);
}

std::string subscription_sql(const std::string& table) {
  return "(select s.subname from pg_subscription_rel sr join pg_stat_subscription s on s.subid = sr.srsubid"
         " where sr.srrelid = " + table + " order by s.subname limit 1)";
}

// The sequences the cursor column takes its ids from (the one its identity
// or serial owns, any its default calls nextval() on), among other objects
// that depend on the column or its default: match them with pg_sequence,
// which holds sequences only.
std::string cursor_sequences_sql(const std::string& table, const std::string& column) {
  return "select d.objid from pg_depend d join pg_attribute a on a.attrelid = d.refobjid and a.attnum = d.refobjsubid"
         " where d.classid = 'pg_class'::regclass and d.refclassid = 'pg_class'::regclass"
         " and d.deptype in ('a', 'i') and a.attrelid = " + table + " and a.attname = " + column +
         " union all"
         " select d.refobjid from pg_attrdef ad join pg_attribute a on a.attrelid = ad.adrelid and a.attnum = ad.adnum"
         " join pg_depend d on d.classid = 'pg_attrdef'::regclass and d.objid = ad.oid"
         " and d.refclassid = 'pg_class'::regclass"
         " where a.attrelid = " + table + " and a.attname = " + column;
}

std::string sequence_cache_sql(const std::string& table, const std::string& column) {
  return "(select max(s.seqcache) from pg_sequence s where s.seqrelid in (" + cursor_sequences_sql(table, column) +
         "))";
}

// Both readings of those sequences in one pass, as a FROM item `seq`: the
// largest CACHE (cache), and the largest last_value where the role may
// read it (last; reading it without the privilege is an error, not a null).
std::string sequence_readings_sql(const std::string& table, const std::string& column) {
  return "(select max(s.seqcache) as cache, max(case when has_sequence_privilege(s.seqrelid, 'SELECT,USAGE')"
         " then pg_sequence_last_value(s.seqrelid) end) as last from pg_sequence s where s.seqrelid in (" +
         cursor_sequences_sql(table, column) + ")) seq";
}

HorizonReading PgSource::read_clock(PgConnection& on, const TableConfig& table, CursorType type, Origin& origin) {
  // One statement: its snapshot (for max) is taken before clock_timestamp()
  // is evaluated, the order core/safe_horizon.h relies on. Seeing other
  // roles' sessions takes pg_read_all_stats's privileges ('usage'): a
  // NOINHERIT member has them only after SET ROLE.
  const bool integer = type == CursorType::Integer;
  const std::string max = integer ? "(select max(" + quote_identifier(table.cursor) + ")::bigint from " +
                                        table.source_table->quoted() + ")"
                                  : std::string("null::bigint");
  const std::string sequences = integer ? ", seq.cache, seq.last from " + sequence_readings_sql("to_regclass($1)", "$2")
                                        : std::string(", null::bigint, null::bigint");
  const std::string sql =
      "select " + max +
      ", (extract(epoch from clock_timestamp()) * 1000000)::bigint"
      ", (select r.rolsuper or pg_has_role(current_user, 'pg_read_all_stats', 'usage') from pg_roles r"
      " where r.rolname = current_user)"
      ", pg_is_in_recovery()"
      ", case when pg_is_in_recovery() and pg_last_wal_receive_lsn() is distinct from pg_last_wal_replay_lsn()"
      " then (extract(epoch from pg_last_xact_replay_timestamp()) * 1000000)::bigint end"
      ", current_database(), (select system_identifier::text from pg_control_system())" + sequences;
  // Without a table's own parts the text is the same for every table.
  const PgResult r = integer ? on.exec(sql, {table.source_table->quoted(), table.cursor}) : on.exec_prepared(sql, {});
  HorizonReading out;
  if (!r.is_null(0, 0)) out.max_cursor = r.integer(0, 0);
  out.clock = r.integer(0, 1);
  out.sees_all_sessions = r.boolean(0, 2);
  origin.in_recovery = r.boolean(0, 3);
  if (!r.is_null(0, 4)) out.replayed_until = r.integer(0, 4);
  origin.database = r.text(0, 5);
  origin.system_identifier = r.text(0, 6);
  if (!r.is_null(0, 7)) out.sequence_cache = r.integer(0, 7);
  if (!r.is_null(0, 8)) out.sequence_last = r.integer(0, 8);
  return out;
}

void PgSource::read_open_transactions(PgConnection& on, HorizonReading& out) {
  // Every transaction open in this database may still write, whether or
  // not it holds a transaction id yet, except tidemark's own read-only
  // sessions and maintenance processes. A prepared transaction comes
  // first: its start is unknown, so it holds everything. A session with
  // track_activities off shows no transaction at all, so it is named
  // instead (one read of pg_stat_activity serves both). A transaction
  // counts from its statement's start when that is earlier: after COMMIT
  // inside a procedure a new transaction begins, but statement_timestamp()
  // still gives the CALL's start.
  const PgResult r = on.exec_prepared(
      "with sessions as ("
      " select pid, coalesce(application_name, '') as app, coalesce(state, '') as state,"
      " coalesce(usename::text, '') as usename,"
      " case when xact_start is not null then least(xact_start, query_start) end as xact_start"
      " from pg_stat_activity"
      " where datname = current_database() and pid <> pg_backend_pid()"
      " and backend_type not in ('autovacuum worker', 'autovacuum launcher', 'walsender')"
      " and not (application_name = $1 and backend_xid is null)),"
      " open as ("
      " select (extract(epoch from xact_start) * 1000000)::bigint as started, false as prepared, pid, app, state"
      " from sessions where xact_start is not null"
      " union all"
      " select (extract(epoch from prepared) * 1000000)::bigint, true, 0, gid, 'prepared'"
      " from pg_prepared_xacts where database = current_database())"
      " select o.started, o.prepared, o.pid, o.app, o.state, u.pid, u.app, u.usename"
      " from (select 1) one"
      " left join (select * from open order by prepared desc, started limit 1) o on true"
      " left join (select pid, app, usename from sessions where state = 'disabled' order by pid limit 1) u on true",
      {std::string(kReadOnlySourceApplication)});
  out.oldest.reset();
  if (!r.is_null(0, 0)) {
    OpenTransaction t;
    t.started = r.integer(0, 0);
    t.prepared = r.boolean(0, 1);
    t.pid = static_cast<int>(r.integer(0, 2));
    t.application_name = r.text(0, 3);
    t.state = r.text(0, 4);
    out.oldest = t;
  }
  out.unreported_session.clear();
  if (!r.is_null(0, 5)) {
    const std::string app = r.text(0, 6);
    out.unreported_session = "pid " + r.text(0, 5) + " (" + (app.empty() ? "no application_name" : app) +
                             ", user " + r.text(0, 7) + ")";
  }
}

std::string PgSource::primary_position(PgConnection& primary) {
  // A synchronous commit is flushed before it becomes visible, an
  // asynchronous one (synchronous_commit = off) only later: the WAL writer
  // flushes it within three wal_writer_delay (PostgreSQL's "Asynchronous
  // Commit"). The standby receives only flushed WAL, so the position that
  // covers every transaction the listing saw as ended is the flush
  // position once it has passed what was inserted at the listing, or once
  // that delay has passed: WAL of transactions still open can stay
  // unflushed for many seconds, and nothing below waits for it.
  const PgResult r = primary.exec(
      "select pg_current_wal_insert_lsn()::text,"
      " (select setting::int from pg_settings where name = 'wal_writer_delay')");
  const std::string inserted = r.text(0, 0);
  const auto deadline =
      std::chrono::steady_clock::now() + 3 * std::chrono::milliseconds(r.integer(0, 1)) + std::chrono::milliseconds(100);
  for (;;) {
    const PgResult f = primary.exec("select pg_current_wal_flush_lsn() >= $1::pg_lsn, pg_current_wal_flush_lsn()::text",
                                    {inserted});
    if (f.boolean(0, 0) || std::chrono::steady_clock::now() >= deadline) return f.text(0, 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void PgSource::wait_for_replay(const std::string& lsn) {
  const auto deadline = std::chrono::steady_clock::now() + primary_.replay_timeout;
  for (;;) {
    if (connection_.exec("select coalesce(pg_last_wal_replay_lsn() >= $1::pg_lsn, false)", {lsn}).boolean(0, 0)) {
      return;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      throw PgError(ErrorKind::Transient,
                    "standby " + connection_.label() + " has not replayed the primary's WAL up to " + lsn +
                        " within replay_timeout (" + std::to_string(primary_.replay_timeout.count()) +
                        "s): the run stops before reading rows the standby may not have yet");
    }
    if (primary_.cancel != nullptr && primary_.cancel->cancelled()) {
      throw PgError(ErrorKind::Transient, primary_.cancel->reason());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void PgSource::warn_once(const std::string& message) {
  if (!warn_) return;
  // Once per process for each message: runs come and go on pooled
  // sessions, and the condition does not change from one run to the next.
  static std::mutex mutex;
  static std::set<std::string> said;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (!said.insert(message).second) return;
  }
  warn_(message);
}

Result<HorizonReading> PgSource::read_horizon(const TableConfig& table, CursorType type,
                                              std::optional<SourceMicros> shared_after) {
  // A reading of the source as a whole (not an integer cursor's, which is
  // the table's own), shared by every run of it for a moment. Not a
  // standby's: what makes its reading safe is that this session's server
  // has replayed up to it, and a host name may lead another session to
  // another standby, further behind.
  const bool shareable = shared_ != nullptr && type != CursorType::Integer && primary_.connection == nullptr;
  const std::string source = shareable ? connection_.endpoint() : std::string();
  if (shareable && shared_after) {
    if (auto recent = shared_->moments.recent(source, *shared_after)) return *std::move(recent);
  }
  auto out = read_fresh_horizon(table, type);
  if (out && shareable && !out->standby_without_primary && !out->replayed_until) shared_->moments.keep(source, *out);
  return out;
}

Result<HorizonReading> PgSource::read_fresh_horizon(const TableConfig& table, CursorType type) {
  return as_result([&]() -> Result<HorizonReading> {
    Origin standby;
    HorizonReading out = read_clock(connection_, table, type, standby);
    PgConnection* reader = &connection_;
    if (standby.in_recovery && primary_.connection != nullptr) {
      // The standby cannot see the primary's transactions: read the horizon
      // there, then let the standby catch up with that moment before any
      // row is read from it.
      Origin primary;
      out = read_clock(*primary_.connection, table, type, primary);
      reader = primary_.connection;
      if (primary.in_recovery) {
        // Its open transactions would be no more visible than the standby's.
        return permanent_error("the primary: of source " + connection_.label() + ", " + reader->label() +
                     ", is itself in recovery; point it at the database that takes the writes");
      }
      if (primary.system_identifier != standby.system_identifier || primary.database != standby.database) {
        // Another server's or another database's sessions are not the
        // writers of this one: their horizon would hold nothing back.
        return permanent_error("the primary: of source " + connection_.label() + ", " + reader->label() + ", is database " +
                     primary.database + " of the server with system identifier " + primary.system_identifier +
                     ", but the standby serves database " + standby.database + " of system identifier " +
                     standby.system_identifier + "; point it at database " + standby.database +
                     " on the standby's primary");
      }
    } else if (standby.in_recovery) {
      out.standby_without_primary = true;
      warn_once("source " + connection_.label() +
                " is a hot standby without a primary: connection; the open transactions of the primary are not "
                "visible, so only the lookback covers rows committed late");
    }
    if (!out.sees_all_sessions) {
      warn_once("source " + reader->label() +
                ": this role cannot see other sessions' open transactions (grant it pg_monitor); the safe horizon "
                "is the source clock alone, and rows committed late rely on the lookback");
    }
    read_open_transactions(*reader, out);
    if (reader != &connection_) {
      wait_for_replay(primary_position(*reader));
    }
    return out;
  });
}

Result<std::optional<std::int64_t>> PgSource::count_changes(const TableConfig& table) {
  return as_result([&] {
    // A partitioned table's statistics are its partitions'; a view or a
    // foreign table keeps none (NULL). A standby counts none of its
    // primary's writes: its primary, when there is a link to it, does.
    PgConnection& on = primary_.connection != nullptr ? *primary_.connection : connection_;
    const PgResult r = on.exec_prepared(
        "select sum(s.n_tup_upd + s.n_tup_del)::bigint from pg_stat_all_tables s"
        " where s.relid = to_regclass($1) or s.relid in (select relid from pg_partition_tree(to_regclass($1)))",
        {table.source_table->quoted()});
    if (r.is_null(0, 0)) return std::optional<std::int64_t>();
    return std::optional<std::int64_t>(r.integer(0, 0));
  });
}

Result<std::optional<TableExtent>> PgSource::measure(const TableConfig& table, const SourceTable& source) {
  // A TID range scan reads a range's pages only; before 14 each range
  // would scan the whole table.
  if (source.kind != RelationKind::Table || connection_.server_major_version() < 14) {
    return std::optional<TableExtent>();
  }
  return as_result([&] {
    // The heap's pages as its file has them now (relpages lags until the
    // next VACUUM or ANALYZE); its bytes with TOAST's. A partitioned
    // table (relkind p) holds no rows itself: its partitions repeat each
    // other's CTIDs.
    const PgResult r = connection_.exec_prepared(
        "select c.relkind = 'r', pg_relation_size(c.oid) / current_setting('block_size')::int8, pg_table_size(c.oid)"
        " from pg_class c where c.oid = to_regclass($1)",
        {table.source_table->quoted()});
    if (r.rows() != 1 || !r.boolean(0, 0)) return std::optional<TableExtent>();
    return std::optional<TableExtent>(TableExtent{r.integer(0, 1), r.integer(0, 2)});
  });
}

Result<std::optional<HeldSnapshot>> PgSource::open_snapshot(const TableConfig& table, const SourceTable& source) {
  static const CancelToken never;
  const CancelToken& cancel = primary_.cancel != nullptr ? *primary_.cancel : never;
  return as_result([&]() -> std::optional<HeldSnapshot> {
    const LoadStatements sql = build_load_statements(table, source.columns, std::nullopt, CopyFormat::Text,
                                                     source.kind, source.catalog);
    // The clock first, in a statement of its own: the watermark is never
    // later than the snapshot.
    HeldSnapshot held;
    held.taken_at = snapshot_clock(connection_.exec(sql.source_clock));
    if (!begin_table_snapshot(connection_, table, source, sql, cancel)) return std::nullopt;
    if (connection_.server_major_version() >= 14) {
      try {
        held.source_xmin = std::stoll(connection_.exec(kSnapshotXminSql).text(0, 0));
      } catch (...) {
        connection_.rollback_quietly();
        throw;
      }
    }
    return held;
  });
}

void PgSource::close_snapshot() {
  // A read-only transaction that ended well commits, keeping its session
  // fit for the run's next statement; any other is rolled back.
  if (connection_.in_transaction()) {
    try {
      connection_.exec("COMMIT");
      return;
    } catch (const PgError&) {
    }
  }
  connection_.rollback_quietly();
}

namespace {

std::string probe_sql(const TableConfig& table, const SourceTable& source, const std::optional<Window>& range) {
  // A foreign table's every look is a query on its remote server: its
  // range is read, not looked at first.
  const bool ask = range && source.kind != RelationKind::ForeignTable;
  return window_probe_statement(table, ask ? range : std::nullopt, source.cursor_type, source.cursor_never_null);
}

// Row `row` of a probe's answer, its columns from `first` on.
WindowProbe probe_of(const PgResult& r, int row, int first) {
  WindowProbe out;
  out.has_rows = r.boolean(row, first);
  out.null_cursor_rows = r.integer(row, first + 1);
  out.infinite_cursor_rows = r.integer(row, first + 2);
  return out;
}

}  // namespace

Result<WindowProbe> PgSource::probe(const TableConfig& table, const SourceTable& source,
                                    const std::optional<Window>& range) {
  return as_result([&] { return probe_of(connection_.exec(probe_sql(table, source, range)), 0, 0); });
}

std::vector<Result<WindowProbe>> PgSource::probe_all(const std::vector<ProbeAsk>& asks) {
  // A statement of many looks costs the planner more than their sum (100
  // take about three times what 20 take, five times over), so they go 20
  // to a statement, each row naming its look.
  constexpr std::size_t kLooksPerStatement = 20;
  std::vector<std::optional<WindowProbe>> found(asks.size());
  try {
    // Each statement's locks are held until the transaction ends: waiting
    // long for one table would hold up the others' DDL, and behind it
    // their writers. It waits a moment at most.
    connection_.exec("BEGIN");
    connection_.exec("SET LOCAL lock_timeout = '1s'");
    for (std::size_t first = 0; first < asks.size(); first += kLooksPerStatement) {
      std::string sql;
      for (std::size_t i = first; i < std::min(asks.size(), first + kLooksPerStatement); ++i) {
        sql += (i == first ? "SELECT " : " UNION ALL SELECT ") + std::to_string(i) + ", p.* FROM (" +
               probe_sql(*asks[i].table, *asks[i].source, asks[i].range) + ") p";
      }
      const PgResult r = connection_.exec(sql);
      for (int row = 0; row < r.rows(); ++row) {
        found.at(static_cast<std::size_t>(r.integer(row, 0))) = probe_of(r, row, 1);
      }
    }
    connection_.exec("COMMIT");
  } catch (const PgError&) {
    connection_.rollback_quietly();
  }
  // What a statement answered before one failed stands: the looks only
  // read. The rest, among them a table whose lock is taken or whose look
  // fails, are asked one by one, as briefly, so that one failing or
  // waiting fails only its own: its run, on its own, then waits as long
  // as a run waits.
  std::vector<Result<WindowProbe>> out;
  for (std::size_t i = 0; i < asks.size(); ++i) {
    if (found[i]) {
      out.emplace_back(*found[i]);
      continue;
    }
    out.push_back(as_result([&] {
      connection_.exec("BEGIN");
      connection_.exec("SET LOCAL lock_timeout = '1s'");
      const PgResult r = connection_.exec(probe_sql(*asks[i].table, *asks[i].source, asks[i].range));
      connection_.exec("COMMIT");
      return probe_of(r, 0, 0);
    }));
    if (!out.back()) connection_.rollback_quietly();
  }
  return out;
}

Result<CursorValue> PgSource::clock_now(CursorType type) {
  return as_result([&] {
    std::string raw = "(extract(epoch from clock_timestamp()) * 1000000)::bigint";
    if (type == CursorType::Timestamp) raw = "(extract(epoch from clock_timestamp()::timestamp) * 1000000)::bigint";
    if (type == CursorType::Date) raw = "clock_timestamp()::date - date '1970-01-01'";
    return CursorValue{type, connection_.exec("select " + raw).integer(0, 0)};
  });
}

Result<std::int64_t> PgSource::rows_from(const TableConfig& table, const CursorValue& from) {
  return as_result([&] {
    return connection_
        .exec("select count(*) from " + table.source_table->quoted() + " where " + quote_identifier(table.cursor) +
              " >= " + cursor_sql_literal(from))
        .integer(0, 0);
  });
}

Result<CursorValue> PgSource::cursor_at(SourceMicros instant, CursorType type) {
  return as_result([&] {
    const std::string at = "('epoch'::timestamptz + $1::bigint * interval '1 microsecond')";
    std::string expr = at;
    if (type == CursorType::Timestamp || type == CursorType::Date) {
      // The wall clock of the source session's time zone (the one writers'
      // now()::timestamp and current_date use when they share it) goes back
      // when daylight saving time ends: after 03:00 CEST it reads 02:00
      // again. A row stamped after `instant` can then carry a wall time
      // below the one at `instant`, so hi is the lowest wall time from
      // `instant` on: at `instant` itself, or where the clock steps back in
      // the next 26 hours (far more than any daylight-saving step). That is
      // found at whole minutes; a step back somewhere inside a minute is
      // taken a whole minute lower.
      expr = "(select min(case when wall - wall_before < at - at_before then wall - (at - at_before) else wall end)"
             " from (select at, at::timestamp as wall, lag(at) over (order by k) as at_before,"
             " lag(at::timestamp) over (order by k) as wall_before"
             " from (select 0 as k, " + at + " as at union all"
             " select k, date_trunc('minute', " + at + ") + k * interval '1 minute'"
             " from generate_series(1, 26 * 60) k) points) walls)";
      if (type == CursorType::Date) expr += "::date";
    }
    const PgResult r = connection_.exec("select " + raw_of(type, expr), {std::to_string(instant)});
    return CursorValue{type, r.integer(0, 0)};
  });
}

Result<std::optional<CursorValue>> PgSource::lower_bound(const TableConfig& table, CursorType type) {
  return as_result([&]() -> Result<std::optional<CursorValue>> {
    const std::string min = "min(" + quote_identifier(table.cursor) + ")";
    if (type == CursorType::Integer) {
      return optional_value(connection_.exec("select " + raw_of(type, min) + " from " + table.source_table->quoted()),
                            type);
    }
    // -infinity is no instant a window can start from; a least value of
    // infinity means no finite one (infinity is above every window, and
    // counted with the horizon). A plain min(), which an index on the
    // cursor answers without reading the table.
    const PgResult r = connection_.exec("select case when " + min + " = '-infinity' then null else " +
                                        raw_of(type, "nullif(" + min + ", 'infinity')") + " end, " + min +
                                        " = '-infinity' from " + table.source_table->quoted());
    if (!r.is_null(0, 1) && r.boolean(0, 1)) {
      return permanent_error("source table " + table.source_table->display() + " has rows whose cursor " +
                             table.cursor +
                             " is -infinity, where no window can start: set initial: to where loading starts (rows "
                             "below it are not loaded)");
    }
    return optional_value(r, type);
  });
}

}  // namespace tidemark
