// How far the runs in flight have copied, in tidemark.run_progress: a row
// a table, written every few seconds from outside the run's transaction
// (by the daemon's state monitor, or `tidemark run`'s progress line), read
// by `status` for the tables whose latest run is running. Owns no
// connection; used by one thread at a time, like the one it is given.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "core/result.h"
#include "core/run/table_key.h"
#include "daemon/pg/libpq/pg_connection.h"

namespace tidemark {

struct CopyProgress {
  TableKey table;
  std::int64_t rows = 0;
  std::int64_t bytes = 0;
  double updated_at = 0;  // Unix seconds, on the state database's clock (as read)
};

// How far a ranged first load has got (tidemark.load_ranges): its ranges
// committed, of all it planned. Durable: a load that stopped part way
// says where it will resume.
struct RangesDone {
  std::int64_t done = 0;
  std::int64_t all = 0;
};

class ProgressBook {
 public:
  explicit ProgressBook(PgConnection& connection) : connection_(connection) {}

  // Each table's rows and bytes so far, in one statement; a schema older
  // than version 17 takes none.
  Status write(const std::vector<CopyProgress>& progress);
  // The progress rows of `tables` (those running): none from a schema
  // older than version 17.
  Result<std::map<TableKey, CopyProgress>> read(const std::vector<TableKey>& tables);
  // The ranged first loads under way among `tables`, in one statement:
  // none from a schema older than version 18.
  Result<std::map<TableKey, RangesDone>> ranges(const std::vector<TableKey>& tables);

 private:
  bool has_table();
  bool has_ranges();

  PgConnection& connection_;
  bool has_table_ = false;  // only a yes is kept: the schema may be migrated later
  bool has_ranges_ = false;  // likewise
};

}  // namespace tidemark
