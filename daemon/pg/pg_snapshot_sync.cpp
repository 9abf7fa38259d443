#include "daemon/pg/pg_snapshot_sync.h"

#include <algorithm>

#include "core/diff/key_blocks.h"
#include "core/diff/row_diff.h"
#include "core/run/schema_drift.h"
#include "core/sql/load_statements.h"
#include "core/sql/reconcile_statements.h"
#include "core/sql/row_fingerprint.h"
#include "core/sql/row_hash_statements.h"
#include "daemon/pg/pg_row_hash_stream.h"

namespace tidemark {
namespace {

// Keys a statement takes at once: about 1 MiB of JSON for integer keys.
constexpr std::size_t kKeysPerStatement = 20000;

// A snapshot's time from the source_clock statement's answer. No SQLSTATE
// when NULL: transient; the standby replays, and the retry reads it.
CursorValue clock_value(const PgResult& clock) {
  if (clock.is_null(0, 0)) throw PgError("the source is a standby that has replayed no transaction yet");
  return CursorValue{CursorType::TimestampTz, std::stoll(clock.text(0, 0))};
}

// A failure of the merge as the PgError this class throws, keeping its kind.
[[noreturn]] void throw_error(const Error& e) {
  if (e.kind == ErrorKind::Permanent) throw PgError::in_query(e.message);
  throw PgError(e.message);
}

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

// Past 1 / this of the blocks differing, the rows are compared whole.
constexpr std::int64_t kMostBlocksShare = 4;

// The first level's differing blocks held at most (8 bytes each and a tag).
constexpr std::size_t kBlockBytes = std::size_t{64} << 20;

}  // namespace

std::optional<SnapshotWrite> PgSnapshotSync::run(const TableConfig& table, const SourceTable& source) {
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
  out.taken_at = clock_value(source_.exec(sql.source_clock));
  source_.exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  try {
    if (source.kind != RelationKind::ForeignTable) {
      try {
        source_.exec("LOCK TABLE " + table.source_table->quoted() + " IN ACCESS SHARE MODE", cancel_);
      } catch (const PgError& e) {
        if (e.sqlstate() != "42501") throw;
        source_.rollback_quietly();
        return std::nullopt;
      }
    }
    const PgResult read = source_.exec(sql.source_columns);
    std::vector<ColumnShape> now;
    for (int i = 0; i < read.rows(); ++i) now.push_back(ColumnShape{read.text(i, 0), read.text(i, 1)});
    if (const auto changed = changed_while_read(table.source_table->display(), source.columns, source.catalog, now)) {
      throw PgError(*changed);  // no SQLSTATE: transient, and the retry looks again
    }

    // Both sides count and fingerprint at once: the cheapest look, and
    // the one an unchanged table ends with.
    source_.send(fingerprint_sql(*table.source_table, columns, hash_record), {});
    target_.send(fingerprint_sql(table.target_table, columns, hash_record), {});
    const PgResult theirs = source_.finish(&cancel_);
    const PgResult ours = target_.finish(&cancel_);
    const std::int64_t source_rows = std::stoll(theirs.text(0, 0));
    const std::int64_t target_rows = std::stoll(ours.text(0, 0));
    if (source_rows == target_rows && theirs.text(0, 1) == ours.text(0, 1)) {
      source_.exec("COMMIT");
      out.counts.rows_read = source_rows;
      out.path = SnapshotPath::Unchanged;
      return out;
    }
    source_.exec(kRowDiffPlanSettings);
    target_.exec(kRowDiffPlanSettings);
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
      blocks = key_range_blocks(source_range, target_range, std::max(source_rows, target_rows));
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
    const std::int64_t rows = std::max(source_rows, target_rows);
    const auto diffed = [&] {
      PgRowHashStream from_source(source_, hashes.source, hashes.order, cancel_);
      PgRowHashStream from_target(target_, hashes.target, hashes.order, cancel_);
      return diff_rows(from_source, from_target, hashes.order, row_diff_limits(rows));
    }();
    if (!diffed) throw_error(diffed.failure());
    const RowDiff& diff = *diffed;
    out.diff = diff.counts;
    out.whole_because = diff.gave_up;
    out.path = diff.gave_up.empty() ? SnapshotPath::Diffed : SnapshotPath::Whole;

    std::int64_t upserted = 0;
    if (!diff.gave_up.empty()) {
      // The whole table crosses, in the same snapshot: gone rows first (a
      // new row may take a value a gone one held in another unique
      // column), then the upsert, which leaves unchanged rows alone.
      bool staged = false;
      out.counts.rows_read = target_.copy_from(
          source_, sql.copy_out,
          [&] {
            target_.exec(sql.create_stage);
            staged = true;
            return sql.copy_into_stage;
          },
          cancel_, format == CopyFormat::Binary);
      out.deleted = target_.exec(staged ? sql.delete_gone : sql.clear_target, cancel_).affected();
      if (staged) upserted = target_.exec(sql.upsert, cancel_).affected();
    } else {
      // Each key column as each side's catalog has it: the target's for
      // the keys to delete, the source's for those to copy.
      std::vector<KeyColumnType> source_keys;
      std::vector<KeyColumnType> target_keys;
      for (std::size_t i = 0; i < table.key.size(); ++i) {
        const ColumnShape* in_source = find_column(source.catalog, table.key[i]);
        const ColumnShape* in_target = find_column(copy_types_.columns, table.key[i]);
        if (in_source == nullptr || in_target == nullptr) {
          throw PgError::in_query("key column " + table.key[i] + " is missing from the source or the target");
        }
        source_keys.push_back(KeyColumnType{in_source->type, diff.fetch.holds_null(i)});
        target_keys.push_back(KeyColumnType{in_target->type, diff.gone.holds_null(i)});
      }
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
          target_.copy_query_into(source_, rows_of_keys, {keys}, {0}, sql.stage, cancel_);
        }
        upserted = target_.exec(sql.upsert, cancel_).affected();
      }
      out.counts.rows_read = source_rows;
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
