#include "daemon/pg/data/pg_unit_of_work.h"

#include <algorithm>
#include <cctype>

#include "core/run/schema_drift.h"
#include "core/sql/load_statements.h"
#include "core/sql/reconcile_statements.h"
#include "core/sql/row_fingerprint.h"
#include "core/text/sql_identifier.h"
#include "core/time/instant_text.h"
#include "daemon/pg/data/partition_bounds.h"
#include "daemon/pg/data/pg_snapshot_sync.h"
#include "daemon/pg/data/relation_catalog.h"
#include "daemon/pg/data/table_snapshot.h"
#include "daemon/pg/data/target_definition.h"
#include "daemon/pg/libpq/pg_copy_stream.h"
#include "daemon/pg/state/run_lock_halves.h"

namespace tidemark {
namespace {

// Characters, as the server counts an error's position (UTF-8 text).
int characters(const std::string& text) {
  return static_cast<int>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

}  // namespace

PgUnitOfWork::~PgUnitOfWork() {
  if (target_open_) target_.rollback_quietly();
  if (state_open_) state_.connection().rollback_quietly();
}

void PgUnitOfWork::open_target() {
  if (target_open_) return;
  if (helper_) {
    // The run's lock is another session's. Held shared until this
    // transaction ends, this keeps a later run of the table waiting
    // (PgTarget::await_range_helpers) should the run lose its lock while
    // the range is being written. (Digits tidemark computed.)
    target_.exec("BEGIN; SELECT pg_advisory_xact_lock_shared(" + RunLockHalves(run_lock_key(lock_)).int4_pair() + ")");
  } else if (&state_.connection() == &target_) {
    target_.exec("BEGIN");  // the session holds the run's lock itself
  } else {
    // The run's lock lives on the state database. Should its session die
    // after the record, while the target commits, the next holder of the
    // lock must not write these rows' partition (or keys) beside them:
    // it waits here, on the target, until this transaction has ended.
    // (The key is a number tidemark computed, not text from anywhere.)
    target_.exec("BEGIN; SELECT pg_advisory_xact_lock(" + std::to_string(run_lock_key(lock_)) + ")");
  }
  target_open_ = true;
}

Status PgUnitOfWork::add_columns(const TableConfig& table, const std::vector<ColumnShape>& columns) {
  if (written_ || state_open_) std::abort();  // columns come before the unit's write and record
  return as_result([&] {
    open_target();
    // The type is the source catalog's own format_type() text (names in
    // it come quoted as needed), not text from the configuration; a type
    // the target database does not have fails here, naming it. IF NOT
    // EXISTS: another table loading into this target may have added the
    // column first (its ALTER held the table until it committed).
    for (const ColumnShape& c : columns) {
      target_.exec("ALTER TABLE " + table.target_table.quoted() + " ADD COLUMN IF NOT EXISTS " +
                   quote_identifier(c.name) + " " + c.type);
    }
    return ok_status();
  });
}

Status PgUnitOfWork::create_table(const TableConfig& table, const SourceTable& source) {
  if (written_ || state_open_) std::abort();  // the table comes before the unit's write and record
  return as_result([&]() -> Status {
    const TableDefinition definition =
        read_table_definition(source_.connection(), *table.source_table, source.columns, table.target_table);
    open_target();
    // Runs of other tables may create the same schema or type, or (shards)
    // the same table, at the same moment. Each object is claimed with a
    // transaction-scoped advisory lock and looked up again once claimed:
    // a run that waited finds it made by the one that held the claim (if
    // that one committed), where creating it too would fail for good. The
    // lookups read the catalogs with the statement's own snapshot: the
    // name lookups (to_regtype and the like) go through caches that a
    // lock of this kind does not refresh.
    const auto claim = [&](const std::string& object) {
      target_.exec("select pg_advisory_xact_lock(hashtextextended($1, 0))", {"tidemark create " + object});
    };
    const auto schema_exists = [&](const std::string& schema) {
      return target_.exec("select exists (select from pg_namespace where nspname = $1)", {schema}).boolean(0, 0);
    };
    const auto create_schema = [&](const std::string& schema) {
      // Looked up first: CREATE SCHEMA IF NOT EXISTS wants the database's
      // CREATE privilege even when the schema is there.
      if (schema_exists(schema)) return;
      claim("schema " + quote_identifier(schema));
      if (!schema_exists(schema)) target_.exec("CREATE SCHEMA " + quote_identifier(schema));
    };
    const std::vector<DefinedType> missing = missing_types(target_, definition);
    if (const auto refusal = creation_refusal(definition, missing, table.target_table)) return permanent_error(*refusal);
    for (const DefinedType& type : missing) {
      create_schema(type.schema);
      claim("type " + type.name);
      const bool made = target_
                            .exec("select exists (select from pg_type t join pg_namespace n on n.oid = t.typnamespace"
                                  " where n.nspname = $1 and t.typname = $2)",
                                  {type.schema, type.type_name})
                            .boolean(0, 0);
      if (!made) target_.exec(type.create);
    }
    if (table.target_table.schema()) create_schema(*table.target_table.schema());
    claim("table " + table.target_table.quoted());
    const bool made = target_
                          .exec("select exists (select from pg_class c join pg_namespace n on n.oid = c.relnamespace"
                                " where n.nspname = coalesce($1, current_schema()) and c.relname = $2)",
                                {table.target_table.schema(), table.target_table.name()})
                          .boolean(0, 0);
    // The load that follows copies in binary where the types allow, as
    // into a table that was there before: the types are read from the
    // table now made (by this run or by another one loading into it).
    const auto read_copy_types = [&] {
      copy_types_ = TargetCopyTypes{read_target_table(target_, table.target_table).columns,
                                    target_.server_major_version() == source_.connection().server_major_version()};
      made_table_ = true;
    };
    if (made) {
      read_copy_types();
      return ok_status();
    }
    // The key as a primary key, if there is one (its columns NOT NULL,
    // also where the source's are not, as a view's: a NULL key fails the
    // load).
    std::string columns;
    for (const DefinedColumn& c : definition.columns) {
      columns += quote_identifier(c.name) + " " + c.type + (c.not_null ? " NOT NULL" : "") + ", ";
    }
    std::string key;
    for (const std::string& k : table.key) key += (key.empty() ? "" : ", ") + quote_identifier(k);
    if (key.empty()) columns.resize(columns.size() - 2);  // rows without a key: no primary key
    target_.exec("CREATE TABLE " + table.target_table.quoted() + " (" + columns +
                 (key.empty() ? std::string() : "PRIMARY KEY (" + key + ")") + ")");
    read_copy_types();
    return ok_status();
  });
}

Result<ChunkCounts> PgUnitOfWork::in_target_transaction(const std::function<ChunkCounts()>& write) {
  if (written_ || state_open_) std::abort();  // one write per unit of work, before its record
  written_ = true;
  try {
    open_target();
    step(ChunkStep::BeforeTargetWrite);
    const ChunkCounts counts = write();
    step(ChunkStep::AfterTargetWrite);
    return counts;
  } catch (const PgError& e) {
    return e.as_error();
  } catch (const std::exception& e) {
    return Error{e.what()};
  }
}

Result<ChunkCounts> PgUnitOfWork::write_chunk(const TableConfig& table, const SourceTable& source,
                                              const Window& window) {
  return in_target_transaction([&] { return load_rows(table, source, window, nullptr); });
}

Result<SnapshotWrite> PgUnitOfWork::replace_table(const TableConfig& table, const SourceTable& source,
                                                  const std::optional<SnapshotHorizon>& since) {
  SnapshotWrite out;
  const auto counts = in_target_transaction([&] {
    // A target that holds rows gets what changed; an empty one, a first
    // load, takes the rows straight from COPY.
    if (target_.exec(build_load_statements(table, source.columns, std::nullopt).target_is_empty).boolean(0, 0)) {
      out.whole_because = "the target is empty";
    } else if (auto synced = PgSnapshotSync(source_.connection(), target_, copy_types_, cancel_).run(table, source, since)) {
      out = *synced;
      return out.counts;
    } else {
      out.whole_because = "this role may not LOCK the source table, which a diff's snapshot needs";
    }
    return load_rows(table, source, std::nullopt, &out);
  });
  if (!counts) return counts.failure();
  out.counts = *counts;
  return out;
}

Result<RangeWrite> PgUnitOfWork::write_range(const TableConfig& table, const SourceTable& source,
                                             const PageRange& pages, bool straight) {
  RangeWrite out;
  const auto written = in_target_transaction([&] {
    const CopyFormat format = copy_types_.format_for(source.columns, source.catalog);
    const LoadStatements sql = build_load_statements(table, source.columns, std::nullopt, format, source.kind,
                                                     source.catalog, copy_types_.columns);
    // Read in the transaction Source::open_snapshot left open on the
    // source session: no statement of its own before the COPY. Without it
    // the range would be read in a snapshot of its own, and the ranges
    // would not be one snapshot of the table.
    if (!source_.connection().in_transaction()) {
      throw PgError(ErrorKind::Transient,
                    "the source's snapshot of " + table.source_table->display() +
                        " ended before its ranges were read; the next run resumes the load");
    }
    bool staged = false;
    ChunkCounts counts;
    try {
      counts.rows_read = PgCopyStream(source_.connection(), target_, cancel_)
                             .copy(
                                 range_copy_out(table, source.columns, format, pages),
                                 [&] {
                                   if (straight && !sql.copy_into_target.empty()) return sql.copy_into_target;
                                   target_.exec(sql.create_stage);
                                   staged = true;
                                   return sql.copy_into_stage;
                                 },
                                 format == CopyFormat::Binary);
    } catch (const PgError& e) {
      // A key the target holds already, in rows of one snapshot copied
      // straight in: written into the target during the load. Not the
      // source's to mend: the next run resumes, upserting, then diffs.
      if (!straight || e.sqlstate() != "23505") throw;
      throw PgError(ErrorKind::Transient, std::string(e.what()) +
                                              " (a row was written into the target during its first load; the next "
                                              "run resumes the load, upserting)");
    }
    counts.rows_written = staged ? target_.exec(sql.upsert, cancel_).affected() : counts.rows_read;
    // As a snapshot's COPY into an empty target: past this transaction,
    // where the target tells rows by their xmin (14 and later).
    if (target_.server_major_version() >= 14) out.target_after = past_this_transaction(target_);
    return counts;
  });
  if (!written) return written.failure();
  out.counts = *written;
  return out;
}

bool PgUnitOfWork::target_is_source(const TableConfig& table, const SourceTable& source, const LoadStatements& sql,
                                    ChunkCounts& counts, SnapshotWrite& snapshot) {
  PgConnection& from = source_.connection();
  const bool hash_record = hash_record_between(from.server_major_version(), target_.server_major_version());
  const std::vector<FingerprintColumn> columns = fingerprint_columns(source.columns, source.catalog, copy_types_.columns);
  // In one source transaction, as a snapshot's COPY: the table's lock,
  // then the clock, then the fingerprint, whose statement snapshot comes
  // after the clock. Both sides count at once.
  from.exec("BEGIN");
  try {
    if (!sql.lock_source.empty()) from.exec(sql.lock_source);
    const PgResult clock = from.exec(sql.source_clock);
    const bool rows_repeat = table.key.empty();
    from.send(fingerprint_sql(*table.source_table, columns, hash_record, false, rows_repeat), {});
    target_.send(fingerprint_sql(table.target_table, columns, hash_record, false, rows_repeat), {});
    const PgResult theirs = from.finish(&cancel_);
    const PgResult ours = target_.finish(&cancel_);
    from.exec("COMMIT");
    if (theirs.text(0, 0) != ours.text(0, 0) || theirs.text(0, 1) != ours.text(0, 1)) return false;
    counts.rows_read = std::stoll(theirs.text(0, 0));
    counts.rows_written = 0;
    snapshot.taken_at = snapshot_clock(clock);
    snapshot.deleted = 0;
    snapshot.path = SnapshotPath::Unchanged;
    return true;
  } catch (...) {
    from.rollback_quietly();
    throw;
  }
}

ChunkCounts PgUnitOfWork::load_rows(const TableConfig& table, const SourceTable& source,
                                    const std::optional<Window>& window, SnapshotWrite* snapshot) {
  const CopyFormat format = copy_types_.format_for(source.columns, source.catalog);
  const LoadStatements sql =
      build_load_statements(table, source.columns, window, format, source.kind, source.catalog, copy_types_.columns);
  // A snapshot of a table the target already holds, row for row, moves
  // nothing: both sides' fingerprints are read first, at once, and only
  // when they differ does every row cross.
  // (An empty target, a first load, has nothing to compare.)
  ChunkCounts counts;
  if (snapshot != nullptr && !target_.exec(sql.target_is_empty).boolean(0, 0) &&
      target_is_source(table, source, sql, counts, *snapshot)) {
    return counts;
  }
  // The source table's lock and its columns as the lock holds them come
  // before the rows, in the COPY's transaction; a snapshot's clock, read
  // under the lock, between them.
  // A snapshot between servers that both tell rows apart by their xmin
  // (14 and later) also reads where the source's snapshot stands, so that
  // the next snapshot's first look finds the rows written since this one
  // and does not diff the whole table (core/diff/recent_rows.h). Read
  // before the COPY's own snapshot: never later than it.
  const bool horizon = snapshot != nullptr && hash_record_between(source_.connection().server_major_version(),
                                                                  target_.server_major_version());
  const std::string source_horizon = horizon ? kSnapshotXminSql : "";
  std::string before;
  for (const std::string* statement : {&sql.lock_source, &sql.source_clock, &source_horizon, &sql.source_columns}) {
    if (!statement->empty()) before += (before.empty() ? "" : "; ") + *statement;
  }
  std::vector<PgResult> answers;
  // The columns' types when the rows were read must be those the plan and
  // the COPY format were made from: rows read as another type are not loaded.
  const auto check_columns = [&] {
    if (answers.empty()) throw PgError(ErrorKind::Transient, "the source's columns did not come with the chunk's rows");
    const PgResult& r = answers.back();
    std::vector<ColumnShape> read;
    for (int i = 0; i < r.rows(); ++i) read.push_back(ColumnShape{r.text(i, 0), r.text(i, 1)});
    const auto changed = changed_while_read(table.source_table->display(), source.columns, source.catalog, read);
    if (changed) throw PgError(ErrorKind::Transient, *changed);  // the retry looks again
  };
  // An empty target takes the rows straight from COPY: a first load
  // runs at COPY speed. Only then is the table locked (and checked
  // again), to keep it empty until we commit; the usual upsert takes
  // no table lock, so it never blocks other writers or autovacuum.
  // None of it happens for a window without rows.
  // Rows without a key go straight into the target: an append's beside
  // those loaded before (each run's rows are new), a snapshot's after the
  // target's rows are cleared.
  const bool keyed = !table.key.empty();
  std::int64_t cleared = 0;
  bool staged = false;
  counts.rows_read = PgCopyStream(source_.connection(), target_, cancel_).copy(
      sql.copy_out,
      [&] {
        check_columns();
        if (!keyed) {
          if (snapshot != nullptr) cleared = target_.exec(sql.clear_target, cancel_).affected();
          return sql.copy_into_target;
        }
        bool empty = !sql.copy_into_target.empty() && target_.exec(sql.target_is_empty).boolean(0, 0);
        if (empty) {
          target_.exec(sql.lock_target);
          empty = target_.exec(sql.target_is_empty).boolean(0, 0);
        }
        if (empty) return sql.copy_into_target;
        target_.exec(sql.create_stage);
        staged = true;
        return sql.copy_into_stage;
      },
      format == CopyFormat::Binary, before, &answers);
  if (counts.rows_read == 0) check_columns();
  if (snapshot != nullptr) {
    // Every statement before the COPY answers with rows (the lock's, none),
    // so the clock's is the one after the lock's, when there is a lock.
    const std::size_t at = sql.lock_source.empty() ? 0 : 1;
    if (answers.size() <= at) {
      throw PgError(ErrorKind::Transient, "the source's clock did not come with the snapshot's rows");
    }
    snapshot->taken_at = snapshot_clock(answers[at]);
    if (horizon) {
      if (answers.size() <= at + 2) {
        throw PgError(ErrorKind::Transient, "the source's snapshot horizon did not come with the snapshot's rows");
      }
      // The target's: past this transaction, whose rows are the source's
      // as of the snapshot. A writer of the target older than it that
      // commits later goes unseen by the first look, whose fingerprints
      // then do not add up: it falls back to the whole diff.
      snapshot->horizon = SnapshotHorizon{std::stoll(answers[at + 1].text(0, 0)), past_this_transaction(target_)};
    }
    // Gone rows go first: a new row may take a value a gone one held in
    // another unique column. Rows straight into an empty target leave
    // nothing to delete; no rows at all leave nothing in the target.
    if (staged) {
      snapshot->deleted = target_.exec(sql.delete_gone, cancel_).affected();
    } else if (!keyed && counts.rows_read > 0) {
      snapshot->deleted = cleared;
    } else if (counts.rows_read == 0) {
      snapshot->deleted = target_.exec(sql.clear_target, cancel_).affected();
    }
  }
  counts.rows_written = staged ? target_.exec(sql.upsert, cancel_).affected() : counts.rows_read;
  if (snapshot != nullptr) counts.rows_written += snapshot->deleted;
  return counts;
}

Result<ChunkCounts> PgUnitOfWork::replace_partition(const TableConfig& table, const PartitionRequest& request) {
  // $1 and $2 take the partition column's own type.
  const auto bounds = partition_bounds(target_, table, request);
  if (!bounds) return bounds.failure();
  const PgParams& params = bounds->params;
  const std::vector<PgOid>& types = bounds->types;
  const std::string& cast = bounds->cast;
  // Every row must fall inside the partition, checked on the source as the
  // rows stream (an extra boolean column, not copied): a query that
  // ignores $1 and $2 would otherwise load rows of other partitions,
  // which this partition's delete never removes and a rerun duplicates.
  const std::string& column = table.partition->column;
  const std::string quoted_column = quote_identifier(column);
  const std::string wrapper = "select q.*, coalesce(q." + quoted_column + " >= $1 and q." + quoted_column +
                              " < $2, false) from (\n";
  const std::string query = wrapper + without_trailing_semicolons(table.query) + "\n) q";
  const std::string partition = "partition [" + params[0].value_or("") + ", " + params[1].value_or("") + ") of " +
                                request.table.display() + " (" + table.target_table.display() + ")";
  CopyRowCheck inside;
  inside.column = column;
  inside.describe = [&](const std::optional<std::string>& value) {
    return partition + ": the query returned a row with " + column + " " + (value ? "= " + *value : "NULL") +
           ", outside the partition; a partition query must return only rows with " + column +
           " >= $1 and < $2; nothing was written";
  };
  return in_target_transaction([&] {
    target_.exec("DELETE FROM " + table.target_table.quoted() + " WHERE " + quoted_column + " >= $1::" + cast +
                     " AND " + quoted_column + " < $2::" + cast,
                 params);
    ChunkCounts counts;
    try {
      counts.rows_read = PgCopyStream(source_.connection(), target_, cancel_)
                             .copy_query(query, params, types, table.target_table.quoted(), &inside);
    } catch (const PgError& e) {
      // An error inside the check itself, not in the configured query:
      // the query does not fit its partition, which no retry changes.
      if (e.position() <= 0 || e.position() > characters(wrapper)) throw;
      if (e.sqlstate() == "42703") {
        throw PgError(ErrorKind::Permanent,
                      partition + ": the query returns no column " + column +
                          " (partition.column), so its rows cannot be checked against the partition");
      }
      throw PgError(ErrorKind::Permanent, partition + ": the query's column " + column +
                                              " cannot be compared with the partition's " + cast +
                                              " bounds: " + e.what());
    }
    counts.rows_written = counts.rows_read;
    return counts;
  });
}


Result<ReconcileWrite> PgUnitOfWork::reconcile(const TableConfig& table, const SourceTable& source,
                                               const ReconcileFix& fix) {
  // Each key column on each side, from the catalogs the run read; the
  // target's for the keys to delete, the source's for those to copy.
  KeyTypes key_types;
  for (std::size_t i = 0; i < table.key.size(); ++i) {
    const std::string& column = table.key[i];
    const ColumnShape* in_source = find_column(source.catalog, column);
    const ColumnShape* in_target = find_column(copy_types_.columns, column);
    if (in_source == nullptr || in_target == nullptr) {
      return Error{"key column " + column + " is missing from the source or the target"};
    }
    key_types.source.push_back(KeyColumnType{in_source->type, keys_hold_null(fix.recopy, i)});
    key_types.target.push_back(KeyColumnType{in_target->type, keys_hold_null(fix.gone, i)});
  }
  const ReconcileStatements sql =
      reconcile_statements(table, source.columns, fix.mark_column, fix.watermark, key_types);
  // The stage and the upsert are the load's own, so a row copied again is
  // written exactly as a load writes it (and its mark cleared).
  const LoadStatements load = build_load_statements(table, source.columns, Window{fix.watermark, fix.watermark},
                                                    CopyFormat::Text, RelationKind::Table, {}, copy_types_.columns);
  std::int64_t changed = 0;
  const auto done = in_target_transaction([&] {
    if (!fix.gone.empty()) {
      const std::string keys = keys_json(table.key, fix.gone);
      changed = target_.exec(fix.mark_column.empty() ? sql.delete_keys : sql.mark_keys, {keys}).affected();
    }
    ChunkCounts counts;
    if (!fix.recopy.empty()) {
      target_.exec(load.create_stage);
      counts.rows_read = PgCopyStream(source_.connection(), target_, cancel_)
                             .copy_query(sql.copy_source, {keys_json(table.key, fix.recopy)}, {0}, load.stage);
      counts.rows_written = counts.rows_read > 0 ? target_.exec(load.upsert).affected() : 0;
    }
    return counts;
  });
  if (!done) return done.failure();
  return ReconcileWrite{changed, *done};
}

Result<StepRecorded> PgUnitOfWork::record(const StepRecord& record) {
  const bool one_database = &state_.connection() == &target_;
  // The dependents' partitions it reaches are flagged with the record:
  // in its transaction when the state lives in the target (committed with
  // it, or not at all); else first, committed on their own, since the
  // state commits after the target and a flag must not be lost with a
  // state that failed to, and once more after both commits (commit()), as
  // a check between the two could have found the rows not changed yet and
  // cleared the first. A flag too many costs one check.
  if (record.recheck && !one_database) {
    if (const Status flagged = state_.flag_downstream(*record.recheck); !flagged) return flagged.failure();
    flag_after_commit_ = record.recheck;
  }
  // With nothing written yet the record stands alone (one statement,
  // which commits all or nothing by itself), unless it must hold a count
  // of its inputs' changes until it commits. Beside written rows it joins
  // their transaction, or, in a separate state database, a transaction of
  // its own that commits right after the target's.
  const bool counts = record.input_changes_seen || (record.recheck && one_database);
  const Status begun = as_result([&] {
    if (one_database && counts) open_target();
    if (!one_database && (target_open_ || record.input_changes_seen) && !state_open_) {
      state_.connection().exec("BEGIN");
      state_open_ = true;
    }
  });
  if (!begun) return begun.failure();
  std::optional<std::int64_t> counted;
  if (counts) {
    const std::vector<TableKey> changed =
        record.recheck && one_database ? record.recheck->tables : std::vector<TableKey>{};
    const auto read = state_.count_input_changes(
        state_.connection(), record.input_changes_seen ? std::optional<TableKey>(record.lock.table) : std::nullopt,
        changed);
    if (!read) return read.failure();
    counted = *read;
    if (record.recheck && one_database) {
      if (const Status flagged = state_.flag_partitions(state_.connection(), *record.recheck); !flagged) {
        return flagged.failure();
      }
    }
  }
  return state_.record_step(state_.connection(), record, counted);
}

Status PgUnitOfWork::commit() {
  try {
    // The target first: should the state's commit then fail, the next run
    // writes the same rows again, which the keyed write (or the
    // partition's delete and insert) makes harmless.
    if (target_open_) {
      target_open_ = false;
      target_.exec("COMMIT");
      if (made_table_ && made_types_ != nullptr) *made_types_ = copy_types_;
    }
    if (state_open_) {
      state_open_ = false;
      state_.connection().exec("COMMIT");
    }
    step(ChunkStep::AfterCommit);
    if (flag_after_commit_) {
      // Best effort: the flags set before the rows stand when this fails.
      state_.flag_downstream(*flag_after_commit_);
      flag_after_commit_.reset();
    }
    return ok_status();
  } catch (const PgError& e) {
    return e.as_error();
  } catch (const std::exception& e) {
    return Error{e.what()};
  }
}

}  // namespace tidemark
