// A row hash stream passed through while it is read, its rows counted and
// their hashes combined as a fingerprint combines them (bit_xor), so that
// a part of a table can be taken out of its fingerprint
// (core/diff/recent_rows.h). Wraps a stream it does not own; one diff, one
// thread.
#pragma once

#include <cstdint>

#include "core/diff/row_hash_stream.h"

namespace tidemark {

class HashTally : public RowHashStream {
 public:
  explicit HashTally(RowHashStream& stream) : stream_(stream) {}

  Result<bool> next(RowHash& row) override;

  std::int64_t rows() const { return rows_; }
  std::uint64_t combined() const { return combined_; }

 private:
  RowHashStream& stream_;
  std::int64_t rows_ = 0;
  std::uint64_t combined_ = 0;
};

}  // namespace tidemark
