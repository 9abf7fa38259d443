// The keys a row diff collected (the rows to copy again, the rows to
// delete), packed into one buffer: about 9 bytes an integer key, so that
// the differences of a large table fit where a vector of strings would
// not. Read back in batches as JSON for the statements that take keys
// (core/sql/reconcile_statements.h). A value type; not synchronised.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/diff/row_hash_stream.h"

namespace tidemark {

class KeyList {
 public:
  // Keys of the columns `order` describes, one entry each.
  explicit KeyList(std::vector<KeyOrder> order) : order_(std::move(order)), nulls_(order_.size(), false) {}
  // Appends a copy of `key`.
  void add(const std::vector<KeyField>& key);
  std::size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  // Whether a key of the list is NULL in column `column` (0-based).
  bool holds_null(std::size_t column) const { return column < nulls_.size() && nulls_[column]; }
  // The bytes the packed keys take.
  std::size_t bytes() const { return packed_.size(); }

  // Where a reading of the list stands; starts at the first key.
  struct Cursor {
    std::size_t offset = 0;
    std::size_t index = 0;
  };
  // The next at most `most` keys from `at` as one JSON array of objects,
  // column name to its text (an integer in decimal), null for NULL: the
  // $1 of keys_json's statements. Empty when `at` is at the end.
  std::string next_json(Cursor& at, const std::vector<std::string>& columns, std::size_t most) const;
  // Requires keys of one KeyOrder::Integer column: their values in
  // order, the NULL ones left out and said by `has_null`.
  std::vector<std::int64_t> integers(bool& has_null) const;
  // The first `most` keys as ROW(...)::text writes them, for a report.
  std::vector<std::string> texts(std::size_t most) const;

 private:
  // Calls `visit(fields)` for each key from `at`, at most `most` times.
  template <class Visit>
  void read(Cursor& at, std::size_t most, Visit visit) const;

  std::vector<KeyOrder> order_;
  std::vector<bool> nulls_;  // per column: a key NULL in it was added
  std::string packed_;
  std::size_t count_ = 0;
};

}  // namespace tidemark
