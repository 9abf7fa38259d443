// The row diff's RowHashStream over one connection: a binary COPY of
// (key columns, row hash) (core/sql/row_hash_statements.h) parsed as it
// streams, checking the run's cancel token as it goes. Owned by the unit
// of work that diffs, for one statement, on its thread.
#pragma once

#include <string>
#include <vector>

#include "core/diff/row_hash_stream.h"
#include "daemon/pg/libpq/pg_copy_reader.h"

namespace tidemark {

class CancelToken;
class PgConnection;

class PgRowHashStream final : public RowHashStream {
 public:
  // Sends `copy_out` at once; its columns are the key columns, as `order`
  // says (a bigint or a text each), then the hash (a bigint), then with
  // `counted` the rows the entry stands for (a bigint).
  PgRowHashStream(PgConnection& connection, const std::string& copy_out, std::vector<KeyOrder> order,
                  const CancelToken& cancel, bool counted = false);

  Result<bool> next(RowHash& row) override;

 private:
  bool parse(std::string_view message, RowHash& row);

  PgCopyReader reader_;
  std::vector<KeyOrder> order_;
  const CancelToken& cancel_;
  std::string label_;
  bool counted_ = false;
  bool header_ = true;  // the first message starts with the file header
  std::size_t rows_ = 0;
};

}  // namespace tidemark
