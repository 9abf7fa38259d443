#include "daemon/pg/data/pg_day_compare.h"

#include <stdexcept>

#include "core/sql/verify_statements.h"
#include "daemon/pg/data/pg_key_side.h"
#include "daemon/pg/data/pg_row_hash_stream.h"

namespace tidemark {

PgDayCompare::PgDayCompare(PgSource& source, PgTarget& target, const TableConfig& table,
                           const SourceTable& source_table, const CancelToken& cancel)
    : source_(source.connection()),
      target_(target.connection()),
      together_{&source_, &target_},
      table_(table),
      source_table_(source_table),
      cancel_(cancel),
      hash_record_(hash_record_between(source_.server_major_version(), target_.server_major_version())) {
  // Key and row texts are compared as text: both sides write them alike.
  normalise_key_text_session(source_);
  normalise_key_text_session(target_);
}

std::map<std::string, std::pair<DayBucket, DayBucket>> PgDayCompare::days(const PipelineConfig& pipeline,
                                                                          const Window& window) {
  const auto read = [&](PgConnection& side, const QualifiedName& relation) {
    return side.exec(verify_query(relation, source_table_.columns, table_.cursor, window, pipeline.timezone));
  };
  const PgResult in_source = read(source_, *table_.source_table);
  const PgResult in_target = read(target_, table_.target_table);
  std::map<std::string, std::pair<DayBucket, DayBucket>> out;
  for (int i = 0; i < in_source.rows(); ++i) {
    out[in_source.text(i, 0)].first = DayBucket{in_source.integer(i, 1), in_source.text(i, 2)};
  }
  for (int i = 0; i < in_target.rows(); ++i) {
    out[in_target.text(i, 0)].second = DayBucket{in_target.integer(i, 1), in_target.text(i, 2)};
  }
  return out;
}

const std::vector<FingerprintColumn>& PgDayCompare::columns() {
  if (columns_) return *columns_;
  const PgResult types = target_.exec(
      "SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a WHERE a.attrelid = $1::regclass"
      " AND a.attnum > 0 AND NOT a.attisdropped",
      {table_.target_table.quoted()});
  std::vector<ColumnShape> in_target;
  for (int i = 0; i < types.rows(); ++i) in_target.push_back(ColumnShape{types.text(i, 0), types.text(i, 1)});
  columns_ = fingerprint_columns(source_table_.columns, source_table_.catalog, in_target);
  return *columns_;
}

RowDiff PgDayCompare::diff_sides(const RowHashStatements& statements, bool counted, std::size_t most) {
  for (PgConnection* side : {&source_, &target_}) {
    side->exec("BEGIN READ ONLY");
    side->exec(kRowDiffPlanSettings);
  }
  auto diffed = [&] {
    PgRowHashStream from_source(source_, statements.source, statements.order, cancel_, counted);
    PgRowHashStream from_target(target_, statements.target, statements.order, cancel_, counted);
    return diff_rows(from_source, from_target, statements.order,
                     RowDiffLimits{static_cast<std::int64_t>(most), std::size_t{16} << 20});
  }();
  for (PgConnection* side : {&source_, &target_}) side->rollback_quietly();
  if (!diffed) throw std::runtime_error(diffed.error());
  return std::move(*diffed);
}

DifferingKeys PgDayCompare::differing_keys(const std::string& where, std::size_t most) {
  const RowDiff diffed = diff_sides(row_hash_statements(table_, columns(), hash_record_, where), false, most);
  DifferingKeys out;
  out.counts = diffed.counts;
  out.fetch = diffed.fetch.texts(most);
  out.gone = diffed.gone.texts(most > out.fetch.size() ? most - out.fetch.size() : 0);
  return out;
}

DifferingRows PgDayCompare::differing_rows(const std::string& where, std::size_t most) {
  const RowDiff diffed = diff_sides(multiset_statements(table_, columns(), hash_record_, where), true, most);
  bool has_null = false;
  std::vector<std::int64_t> hashes = diffed.fetch.integers(has_null);
  for (const std::int64_t h : diffed.gone.integers(has_null)) hashes.push_back(h);
  if (hashes.size() > most) hashes.resize(most);
  const std::string array = hashes_array(hashes);
  const RowsOfHashes of_hashes = rows_of_hashes_statements(table_, columns(), hash_record_);
  DifferingRows out;
  out.counts = diffed.counts;
  const PgResult in_source = source_.exec(of_hashes.counted_source, {array});
  const PgResult in_target = target_.exec(of_hashes.counted_target, {array});
  for (int i = 0; i < in_source.rows(); ++i) out.held[in_source.text(i, 0)].first = in_source.text(i, 1);
  for (int i = 0; i < in_target.rows(); ++i) out.held[in_target.text(i, 0)].second = in_target.text(i, 1);
  return out;
}

}  // namespace tidemark
