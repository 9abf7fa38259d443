#include "core/diff/row_diff.h"

#include <algorithm>

namespace tidemark {
namespace {

// A key copied out of its stream's buffer, its fields pointing into
// strings that keep their capacity from row to row.
class HeldKey {
 public:
  void assign(const std::vector<KeyField>& key) {
    fields_ = key;
    text_.resize(key.size());
    for (std::size_t i = 0; i < key.size(); ++i) {
      if (key[i].bytes.data() == nullptr) continue;
      text_[i].assign(key[i].bytes.data(), key[i].bytes.size());
      fields_[i].bytes = text_[i];
    }
    held_ = true;
  }
  bool held() const { return held_; }
  const std::vector<KeyField>& fields() const { return fields_; }

 private:
  std::vector<KeyField> fields_;
  std::vector<std::string> text_;
  bool held_ = false;
};

// One side as the merge reads it: the current row, and the key before it
// to check the order against.
class Side {
 public:
  Side(RowHashStream& stream, const char* name, const std::vector<KeyOrder>& order)
      : stream_(stream), name_(name), order_(order) {}

  // Moves to the next row, counting it; `out_of_order` says why it is
  // not above the one before (empty when it is).
  Result<bool> advance(std::int64_t& rows, std::string& out_of_order) {
    if (has_ && out_of_order.empty()) previous_.assign(row_.key);
    const auto more = stream_.next(row_);
    if (!more) return more;
    has_ = *more;
    if (!has_) return false;
    rows += row_.rows;
    if (out_of_order.empty() && previous_.held() && compare_keys(previous_.fields(), row_.key, order_) >= 0) {
      out_of_order = std::string("the ") + name_ + "'s keys did not arrive in ascending order without repeats";
    }
    return true;
  }
  bool has() const { return has_; }
  const RowHash& row() const { return row_; }

 private:
  RowHashStream& stream_;
  const char* name_;
  const std::vector<KeyOrder>& order_;
  RowHash row_;
  HeldKey previous_;
  bool has_ = false;
};

// Differences a diff copies one by one in any table: in a small one,
// crossing the whole table saves nothing worth a rule.
constexpr std::int64_t kFewDifferences = 10000;

}  // namespace

RowDiffLimits row_diff_limits(std::int64_t rows) {
  return RowDiffLimits{std::max<std::int64_t>(rows / 3, kFewDifferences), std::size_t{32} << 20};
}

Result<RowDiff> diff_rows(RowHashStream& source, RowHashStream& target, const std::vector<KeyOrder>& order,
                          const RowDiffLimits& limits) {
  RowDiff diff(order);
  RowDiffCounts& n = diff.counts;
  Side s(source, "source", order);
  Side t(target, "target", order);
  std::string out_of_order;
  const auto advance = [&](Side& side, std::int64_t& rows) -> Status {
    const auto more = side.advance(rows, out_of_order);
    if (!more) return more.failure();
    if (!out_of_order.empty() && diff.gave_up.empty()) diff.gave_up = out_of_order;
    return ok_status();
  };
  if (const Status moved = advance(s, n.source_rows); !moved) return moved.failure();
  if (const Status moved = advance(t, n.target_rows); !moved) return moved.failure();
  while (s.has() || t.has()) {
    const int c = !s.has() ? 1 : !t.has() ? -1 : compare_keys(s.row().key, t.row().key, order);
    const bool collecting = diff.gave_up.empty();
    if (c < 0) {
      ++n.missing;
      if (collecting) diff.fetch.add(s.row().key);
    } else if (c > 0) {
      ++n.gone;
      if (collecting) diff.gone.add(t.row().key);
    } else if (s.row().hash != t.row().hash) {
      ++n.changed;
      if (collecting) diff.fetch.add(s.row().key);
    }
    if (collecting && diff.gave_up.empty()) {
      if (n.missing + n.changed + n.gone > limits.max_differences) {
        diff.gave_up = "more than " + std::to_string(limits.max_differences) + " rows differ";
      } else if (diff.fetch.bytes() + diff.gone.bytes() > limits.max_key_bytes) {
        diff.gave_up = "the differing keys take more than " + std::to_string(limits.max_key_bytes) + " bytes";
      }
    }
    if (c <= 0) {
      if (const Status moved = advance(s, n.source_rows); !moved) return moved.failure();
    }
    if (c >= 0) {
      if (const Status moved = advance(t, n.target_rows); !moved) return moved.failure();
    }
  }
  return diff;
}

}  // namespace tidemark
