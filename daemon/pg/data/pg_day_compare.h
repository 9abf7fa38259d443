// One table's source and target compared day by day, for `tidemark
// verify`: each day's count and checksum on both sides, and for a day that
// differs, the keys (or, without a key, the row values) that differ. Over
// the sessions of a job's source and target (JobPorts); one per table
// verified, on the command's thread. Every method throws on a failure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/config/config_model.h"
#include "core/diff/row_diff.h"
#include "core/run/cancel_token.h"
#include "core/run/run_ports.h"
#include "core/sql/row_fingerprint.h"
#include "core/sql/row_hash_statements.h"
#include "daemon/pg/data/pg_source.h"
#include "daemon/pg/data/pg_target.h"
#include "daemon/pg/libpq/read_together.h"

namespace tidemark {

// One day's rows on one side.
struct DayBucket {
  std::int64_t rows = 0;
  std::string checksum = "0";
};

// The keys of one day that differ: what the diff counted, and the first
// ones named (missing or other values; only in the target).
struct DifferingKeys {
  RowDiffCounts counts;
  std::vector<std::string> fetch;
  std::vector<std::string> gone;
};

// The row values of one day of a table without a key whose counts differ:
// what the diff counted, and each value named with how often each side
// holds it (empty: none).
struct DifferingRows {
  RowDiffCounts counts;
  std::map<std::string, std::pair<std::string, std::string>> held;  // row text -> (source, target)
};

class PgDayCompare {
 public:
  // `table` and `source_table` (what the source's inspect() found) must
  // outlive it; so must the sessions under `source` and `target`, and
  // `cancel`, which stops a diff's streams.
  PgDayCompare(PgSource& source, PgTarget& target, const TableConfig& table, const SourceTable& source_table,
               const CancelToken& cancel);

  // Each side's buckets of `window` by day (the pipeline's time zone), in
  // day order: the source's first, the target's second.
  std::map<std::string, std::pair<DayBucket, DayBucket>> days(const PipelineConfig& pipeline, const Window& window);
  // The first `most` keys that differ among the rows `where` picks: both
  // sides' (key, row hash) streams, merged.
  DifferingKeys differing_keys(const std::string& where, std::size_t most);
  // The first `most` row values whose counts differ among the rows
  // `where` picks (a table without a key): both sides' multisets of row
  // hashes, merged, then each differing value counted on both sides.
  DifferingRows differing_rows(const std::string& where, std::size_t most);

 private:
  // Each loaded column with its type on both sides, as the row diff
  // hashes it; read once.
  const std::vector<FingerprintColumn>& columns();
  // Both sides' streams of `statements` (`counted`: each entry stands for
  // its count of rows), merged in a read-only transaction a side under
  // the diff's plan settings; collecting stops past `most` differences.
  RowDiff diff_sides(const RowHashStatements& statements, bool counted, std::size_t most);

  PgConnection& source_;
  PgConnection& target_;
  // The diffs' two streams, read as they come (read_together.h).
  ReadTogether together_;
  const TableConfig& table_;
  const SourceTable& source_table_;
  const CancelToken& cancel_;
  bool hash_record_;
  std::optional<std::vector<FingerprintColumn>> columns_;
};

}  // namespace tidemark
