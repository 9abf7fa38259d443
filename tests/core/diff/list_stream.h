// A row hash stream over a list, for the tests of the row diff's merges:
// each row's key columns as text ("~" is NULL; a column of
// KeyOrder::Integer parsed as a number) and its hash, and optionally a
// failure at a given row. One test, one thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/diff/row_hash_stream.h"

namespace tidemark::testing {

struct Row {
  std::vector<std::string> key;
  std::uint64_t hash = 0;
};

class ListStream final : public RowHashStream {
 public:
  ListStream(std::vector<Row> rows, std::vector<KeyOrder> order, std::optional<std::size_t> fail_at = std::nullopt)
      : rows_(std::move(rows)), order_(std::move(order)), fail_at_(fail_at) {}

  Result<bool> next(RowHash& row) override {
    if (fail_at_ && at_ == *fail_at_) return Error{"the session was lost"};
    if (at_ == rows_.size()) return false;
    const Row& r = rows_[at_++];
    row.key.assign(r.key.size(), KeyField{});
    for (std::size_t i = 0; i < r.key.size(); ++i) {
      if (r.key[i] == "~") {
        row.key[i].null = true;
      } else if (order_[i] == KeyOrder::Integer) {
        row.key[i].integer = std::stoll(r.key[i]);
      } else {
        row.key[i].bytes = r.key[i];
      }
    }
    row.hash = r.hash;
    return true;
  }

 private:
  std::vector<Row> rows_;
  std::vector<KeyOrder> order_;
  std::optional<std::size_t> fail_at_;
  std::size_t at_ = 0;
};

}  // namespace tidemark::testing
