#include "daemon/pg/data/pg_snapshot_sync.h"

#include <algorithm>

#include "core/diff/key_blocks.h"
#include "core/diff/recent_rows.h"
#include "core/diff/row_diff.h"
#include "core/run/schema_drift.h"
#include "core/sql/load_statements.h"
#include "core/sql/reconcile_statements.h"
#include "core/sql/row_fingerprint.h"
#include "core/sql/row_hash_statements.h"
#include "daemon/pg/data/pg_keyed_hash_stream.h"
#include "daemon/pg/data/pg_row_hash_stream.h"
#include "daemon/pg/data/table_snapshot.h"
#include "daemon/pg/libpq/pg_copy_stream.h"

namespace tidemark {
namespace {

// Keys a statement takes at once: about 1 MiB of JSON for integer keys.
constexpr std::size_t kKeysPerStatement = 20000;

// A failure of the merge as the PgError this class throws, keeping its kind.
[[noreturn]] void throw_error(const Error& e) { throw PgError(e.kind, e.message); }

// The blocks of an integer key's range over both sides (key_range_statement's
// answers: min and max NULL on a side without rows) for `rows` rows.
std::optional<KeyBlocks> key_range_blocks(const PgResult& source, const PgResult& target, std::int64_t rows) {
  std::optional<std::int64_t> min;
  std::optional<std::int64_t> max;
  for (const PgResult* side : {&source, &target}) {
    if (side->is_null(0, 0)) continue;
    const std::int64_t lo = std::stoll(side->text(0, 0));
    const std::int64_t hi = std::stoll(side->text(0, 1));
    min = min ? std::min(*min, lo) : lo;
    max = max ? std::max(*max, hi) : hi;
  }
  if (!min) return std::nullopt;
  return key_blocks(*min, *max, rows);
}

// Row hashes a statement takes at once (about 2 MiB of text): each
// statement reads its whole table, so they are many.
constexpr std::size_t kHashesPerStatement = 100000;

// Past 1 / this of the blocks differing, the rows are compared whole.
constexpr std::int64_t kMostBlocksShare = 4;

// The first level's differing blocks held at most (8 bytes each and a tag).
constexpr std::size_t kBlockBytes = std::size_t{64} << 20;

// A side's fingerprint from fingerprint_sql's answer, where rows are
// hashed as records (`hash_record`): before 14 the hashes are summed, a
// numeric that no 64 bits hold, and only its text is compared.
TableFingerprint fingerprint_of(const PgResult& answer, bool hash_record) {
  TableFingerprint out{std::stoll(answer.text(0, 0)), 0};
  if (hash_record) out.combined = static_cast<std::uint64_t>(std::stoll(answer.text(0, 1)));
  return out;
}

// Whether the first look can be taken on `table`'s key: each key column of
// one type on both sides (a key read as the other side's type could fail
// to parse there, where the whole diff sends each side's keys to it
// alone).
bool same_key_types(const TableConfig& table, const std::vector<FingerprintColumn>& columns) {
  for (const std::string& k : table.key) {
    const auto c = std::find_if(columns.begin(), columns.end(), [&](const FingerprintColumn& f) { return f.name == k; });
    if (c == columns.end() || c->source_type.empty() || c->source_type != c->target_type) return false;
  }
  return true;
}

// Each key column as `catalog` has it, NULL in some key of `keys` or not.
std::vector<KeyColumnType> key_types(const TableConfig& table, const std::vector<ColumnShape>& catalog,
                                     const KeyList& keys) {
  std::vector<KeyColumnType> out;
  for (std::size_t i = 0; i < table.key.size(); ++i) {
    const ColumnShape* column = find_column(catalog, table.key[i]);
    if (column == nullptr) {
      throw PgError(ErrorKind::Permanent, "key column " + table.key[i] + " is missing from the source or the target");
    }
    out.push_back(KeyColumnType{column->type, keys.holds_null(i)});
  }
  return out;
}

}  // namespace

std::optional<RowDiff> PgSnapshotSync::diff_recent(const TableConfig& table, const SourceTable& source,
                                                   const std::vector<FingerprintColumn>& columns,
                                                   const SnapshotHorizon& since, const TableFingerprint& theirs,
                                                   const TableFingerprint& ours) {
  const std::int64_t rows = std::max(theirs.rows, ours.rows);
  const std::int64_t most = recent_keys_limit(rows);
  const RowHashStatements recent = recent_key_statements(table, columns, since, most + 1);
  const auto keys = [&] {
    PgRowHashStream from_source(source_, recent.source, recent.order, cancel_);
    PgRowHashStream from_target(target_, recent.target, recent.order, cancel_);
    return union_keys(from_source, from_target, recent.order, static_cast<std::size_t>(most));
  }();
  if (!keys) throw_error(keys.failure());
  if (!*keys) return std::nullopt;
  const KeyList& recent_keys = **keys;
  // A NULL key is matched with IS NOT DISTINCT FROM, which no index
  // serves: every batch would scan the table once per key.
  for (std::size_t i = 0; i < table.key.size(); ++i) {
    if (recent_keys.holds_null(i)) return std::nullopt;
  }
  const RowHashStatements keyed =
      keyed_hash_statements(table, columns, key_types(table, source.catalog, recent_keys),
                            key_types(table, copy_types_.columns, recent_keys));
  PgKeyedHashStream source_rows(source_, keyed.source, recent_keys, table.key, keyed.order, kKeysPerStatement, cancel_);
  PgKeyedHashStream target_rows(target_, keyed.target, recent_keys, table.key, keyed.order, kKeysPerStatement, cancel_);
  HashTally source_tally(source_rows);
  HashTally target_tally(target_rows);
  auto diffed = diff_rows(source_tally, target_tally, keyed.order, row_diff_limits(rows));
  if (!diffed) throw_error(diffed.failure());
  if (!diffed->gave_up.empty() || !recent_rows_explain(theirs, ours, source_tally, target_tally)) return std::nullopt;
  return std::move(*diffed);
}

RowDiff PgSnapshotSync::diff_all(const TableConfig& table, const std::vector<FingerprintColumn>& columns,
                                 bool hash_record, std::int64_t rows) {
  RowHashStatements hashes = row_hash_statements(table, columns, hash_record);
  std::optional<KeyBlocks> blocks;
  if (hashes.order == std::vector<KeyOrder>{KeyOrder::Integer}) {
    // A table keyed by one integer column is compared block by block
    // first: only the rows of the blocks that differ are hashed one by
    // one and cross. The key's range comes from its index.
    source_.send(key_range_statement(*table.source_table, table.key[0]), {});
    target_.send(key_range_statement(table.target_table, table.key[0]), {});
    const PgResult source_range = source_.finish(&cancel_);
    const PgResult target_range = target_.finish(&cancel_);
    blocks = key_range_blocks(source_range, target_range, rows);
  }
  if (blocks) {
    const RowHashStatements by_block = block_statements(table, columns, hash_record, *blocks);
    const auto blocks_diffed = [&] {
      PgRowHashStream from_source(source_, by_block.source, by_block.order, cancel_, /*counted=*/true);
      PgRowHashStream from_target(target_, by_block.target, by_block.order, cancel_, /*counted=*/true);
      return diff_rows(from_source, from_target, by_block.order, RowDiffLimits{blocks->count + 1, kBlockBytes});
    }();
    if (!blocks_diffed) throw_error(blocks_diffed.failure());
    bool null_block = false;
    const std::vector<std::int64_t> which = differing_blocks(blocks_diffed->fetch, blocks_diffed->gone, null_block);
    // Blocks that all agree, against fingerprints that did not, leave
    // the rows' own comparison to say what differs; so do more than a
    // quarter of the blocks, which the whole stream reads for less than
    // a range of the index each.
    const bool few = static_cast<std::int64_t>(which.size()) <= blocks->count / kMostBlocksShare;
    if (blocks_diffed->gave_up.empty() && (!which.empty() || null_block) && few) {
      hashes = row_hash_statements_in(table, columns, hash_record, *blocks, which, null_block);
    }
  }
  auto diffed = [&] {
    PgRowHashStream from_source(source_, hashes.source, hashes.order, cancel_);
    PgRowHashStream from_target(target_, hashes.target, hashes.order, cancel_);
    return diff_rows(from_source, from_target, hashes.order, row_diff_limits(rows));
  }();
  if (!diffed) throw_error(diffed.failure());
  return std::move(*diffed);
}

void PgSnapshotSync::write_multiset(const TableConfig& table, const std::vector<FingerprintColumn>& columns,
                                    bool hash_record, const LoadStatements& sql, CopyFormat format, std::int64_t rows,
                                    SnapshotWrite& out) {
  const RowHashStatements multisets = multiset_statements(table, columns, hash_record);
  auto diffed = [&] {
    PgRowHashStream from_source(source_, multisets.source, multisets.order, cancel_, /*counted=*/true);
    PgRowHashStream from_target(target_, multisets.target, multisets.order, cancel_, /*counted=*/true);
    return diff_rows(from_source, from_target, multisets.order, row_diff_limits(rows));
  }();
  if (!diffed) throw_error(diffed.failure());
  const RowDiff& diff = *diffed;
  out.diff = diff.counts;
  out.whole_because = diff.gave_up;
  out.path = diff.gave_up.empty() ? SnapshotPath::Diffed : SnapshotPath::Whole;
  std::int64_t inserted = 0;
  if (!diff.gave_up.empty()) {
    // The whole table crosses, in the same snapshot, after the target's
    // rows are cleared: without a key there is nothing to upsert on.
    out.deleted = target_.exec(sql.clear_target, cancel_).affected();
    inserted = PgCopyStream(source_, target_, cancel_)
                   .copy(sql.copy_out, [&] { return sql.copy_into_target; }, format == CopyFormat::Binary);
  } else {
    // A row value whose count differs has every copy of it replaced: the
    // copies are alike, so which of them stay is no matter. Values the
    // source lacks go, values it holds more or fewer times come again.
    const RowsOfHashes of_hashes = rows_of_hashes_statements(table, columns, hash_record);
    bool has_null = false;
    const std::vector<std::int64_t> gone = diff.gone.integers(has_null);
    const std::vector<std::int64_t> fetch = diff.fetch.integers(has_null);
    for (const std::vector<std::int64_t>* hashes : {&gone, &fetch}) {
      for (std::size_t at = 0; at < hashes->size(); at += kHashesPerStatement) {
        target_.send(of_hashes.delete_target, {hashes_array(*hashes, at, kHashesPerStatement)});
        out.deleted += target_.finish(&cancel_).affected();
      }
    }
    for (std::size_t at = 0; at < fetch.size(); at += kHashesPerStatement) {
      inserted += PgCopyStream(source_, target_, cancel_)
                      .copy_query(of_hashes.select_source, {hashes_array(fetch, at, kHashesPerStatement)}, {0},
                                  table.target_table.quoted());
    }
  }
  out.counts.rows_written = inserted + out.deleted;
}

std::optional<SnapshotWrite> PgSnapshotSync::run(const TableConfig& table, const SourceTable& source,
                                                 const std::optional<SnapshotHorizon>& since) {
  const CopyFormat format = copy_types_.format_for(source.columns, source.catalog);
  const LoadStatements sql = build_load_statements(table, source.columns, std::nullopt, format, source.kind, source.catalog);
  const std::vector<FingerprintColumn> columns = fingerprint_columns(source.columns, source.catalog, copy_types_.columns);
  const bool hash_record = hash_record_between(source_.server_major_version(), target_.server_major_version());

  SnapshotWrite out;
  // The clock before the snapshot (its own statement, read committed):
  // the watermark is never later than what the snapshot holds. Then one
  // snapshot for every read, taken after the table's lock: a rewrite or
  // TRUNCATE that committed while the lock was awaited is seen as it left
  // the table, never as an empty one.
  out.taken_at = snapshot_clock(source_.exec(sql.source_clock));
  if (!begin_table_snapshot(source_, table, source, sql, cancel_)) return std::nullopt;
  try {
    // Both sides count and fingerprint at once: the cheapest look, and
    // the one an unchanged table ends with. Where both servers hash rows
    // as records (14 and later), the same statements say where each
    // side's snapshot stands, for the next snapshot's first look.
    const bool horizons = hash_record;
    const bool rows_repeat = table.key.empty();
    source_.send(fingerprint_sql(*table.source_table, columns, hash_record, horizons, rows_repeat), {});
    target_.send(fingerprint_sql(table.target_table, columns, hash_record, horizons, rows_repeat), {});
    const PgResult theirs = source_.finish(&cancel_);
    const PgResult ours = target_.finish(&cancel_);
    const TableFingerprint source_print = fingerprint_of(theirs, hash_record);
    const TableFingerprint target_print = fingerprint_of(ours, hash_record);
    if (horizons) out.horizon = SnapshotHorizon{std::stoll(theirs.text(0, 2)), std::stoll(ours.text(0, 2))};
    if (source_print.rows == target_print.rows && theirs.text(0, 1) == ours.text(0, 1)) {
      source_.exec("COMMIT");
      out.counts.rows_read = source_print.rows;
      out.path = SnapshotPath::Unchanged;
      return out;
    }
    source_.exec(kRowDiffPlanSettings);
    target_.exec(kRowDiffPlanSettings);
    // First the rows written since the previous snapshot, where the rows
    // have an xmin to tell them by (a table's, not a view's or a foreign
    // table's), the key is of one type on both sides and both sides'
    // horizons still tell them.
    std::optional<RowDiff> recent;
    const bool xmin = source.kind == RelationKind::Table || source.kind == RelationKind::MaterializedView;
    if (table.key.empty()) {
      write_multiset(table, columns, hash_record, sql, format, std::max(source_print.rows, target_print.rows), out);
      out.counts.rows_read = source_print.rows;
      source_.exec("COMMIT");
      return out;
    }
    if (horizons && xmin && since && same_key_types(table, columns) &&
        horizon_usable(since->source, std::stoll(theirs.text(0, 3))) &&
        horizon_usable(since->target, std::stoll(ours.text(0, 3)))) {
      recent = diff_recent(table, source, columns, *since, source_print, target_print);
    }
    const RowDiff diff =
        recent ? std::move(*recent) : diff_all(table, columns, hash_record, std::max(source_print.rows, target_print.rows));
    out.diff = diff.counts;
    out.whole_because = diff.gave_up;
    out.path = !diff.gave_up.empty() ? SnapshotPath::Whole : recent ? SnapshotPath::Recent : SnapshotPath::Diffed;

    std::int64_t upserted = 0;
    if (!diff.gave_up.empty()) {
      // The whole table crosses, in the same snapshot: gone rows first (a
      // new row may take a value a gone one held in another unique
      // column), then the upsert, which leaves unchanged rows alone.
      bool staged = false;
      const auto stage = [&] {
        target_.exec(sql.create_stage);
        staged = true;
        return sql.copy_into_stage;
      };
      out.counts.rows_read =
          PgCopyStream(source_, target_, cancel_).copy(sql.copy_out, stage, format == CopyFormat::Binary);
      out.deleted = target_.exec(staged ? sql.delete_gone : sql.clear_target, cancel_).affected();
      if (staged) upserted = target_.exec(sql.upsert, cancel_).affected();
    } else {
      // Each key column as each side's catalog has it: the target's for
      // the keys to delete, the source's for those to copy.
      const std::vector<KeyColumnType> source_keys = key_types(table, source.catalog, diff.fetch);
      const std::vector<KeyColumnType> target_keys = key_types(table, copy_types_.columns, diff.gone);
      KeyList::Cursor at;
      const std::string delete_keys = delete_keys_statement(table, target_keys);
      for (std::string keys; !(keys = diff.gone.next_json(at, table.key, kKeysPerStatement)).empty();) {
        // A signal cancels the statement on the server (a delete that a
        // target's trigger or lock holds up must not keep a run alive).
        target_.send(delete_keys, {keys});
        out.deleted += target_.finish(&cancel_).affected();
      }
      if (!diff.fetch.empty()) {
        target_.exec(sql.create_stage);
        const std::string rows_of_keys = rows_of_keys_statement(table, source.columns, source_keys);
        at = KeyList::Cursor{};
        for (std::string keys; !(keys = diff.fetch.next_json(at, table.key, kKeysPerStatement)).empty();) {
          PgCopyStream(source_, target_, cancel_).copy_query(rows_of_keys, {keys}, {0}, sql.stage);
        }
        upserted = target_.exec(sql.upsert, cancel_).affected();
      }
      out.counts.rows_read = source_print.rows;
    }
    source_.exec("COMMIT");
    out.counts.rows_written = upserted + out.deleted;
    return out;
  } catch (...) {
    source_.rollback_quietly();
    throw;
  }
}

}  // namespace tidemark
