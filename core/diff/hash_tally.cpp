#include "core/diff/hash_tally.h"

namespace tidemark {

Result<bool> HashTally::next(RowHash& row) {
  const auto more = stream_.next(row);
  if (more && *more) {
    rows_ += row.rows;
    combined_ ^= row.hash;
  }
  return more;
}

}  // namespace tidemark
