#include "core/diff/recent_rows.h"

#include <algorithm>
#include <string>

namespace tidemark {
namespace {

// Transaction ids that may start between the snapshot and the scan's
// reading of the current one, and then some.
constexpr std::int64_t kXidMargin = std::int64_t{1} << 24;
constexpr std::int64_t kXidHalfRange = std::int64_t{1} << 31;

// A stream's current key, copied out of its buffer.
class Current {
 public:
  explicit Current(RowHashStream& stream) : stream_(stream) {}

  Result<bool> advance() {
    const auto more = stream_.next(row_);
    if (more) has_ = *more;
    return more;
  }
  bool has() const { return has_; }
  const std::vector<KeyField>& key() const { return row_.key; }

 private:
  RowHashStream& stream_;
  RowHash row_;
  bool has_ = false;
};

}  // namespace

bool horizon_usable(std::int64_t since, std::int64_t next) {
  return since > 0 && since <= next && next - since < kXidHalfRange - kXidMargin;
}

std::int64_t recent_keys_limit(std::int64_t rows) {
  return std::min<std::int64_t>(std::max<std::int64_t>(rows / 4, 1000), 1000000);
}

std::int64_t xid32(std::int64_t since) { return since & 0xffffffff; }

bool recent_rows_explain(const TableFingerprint& source, const TableFingerprint& target,
                         const HashTally& source_recent, const HashTally& target_recent) {
  return target.rows - target_recent.rows() + source_recent.rows() == source.rows &&
         (target.combined ^ target_recent.combined() ^ source_recent.combined()) == source.combined;
}

Result<std::optional<KeyList>> union_keys(RowHashStream& a, RowHashStream& b, const std::vector<KeyOrder>& order,
                                          std::size_t most) {
  KeyList keys(order);
  Current x(a);
  Current y(b);
  // The last key added, held: a stream's buffer moves on under its view.
  std::vector<std::string> held(order.size());
  std::vector<KeyField> previous;
  const auto add = [&](const std::vector<KeyField>& key) -> bool {
    if (!previous.empty()) {
      const int c = compare_keys(previous, key, order);
      if (c > 0) return false;  // out of order
      if (c == 0) return true;  // a repeat
    }
    if (keys.size() == most) return false;
    keys.add(key);
    previous = key;
    for (std::size_t i = 0; i < key.size(); ++i) {
      if (key[i].null || order[i] != KeyOrder::Bytes) continue;
      held[i].assign(key[i].bytes.data(), key[i].bytes.size());
      previous[i].bytes = held[i];
    }
    return true;
  };
  for (Current* side : {&x, &y}) {
    if (const auto more = side->advance(); !more) return more.failure();
  }
  bool complete = true;
  while (x.has() || y.has()) {
    const int c = !x.has() ? 1 : !y.has() ? -1 : compare_keys(x.key(), y.key(), order);
    // Past the limit or out of order, both streams are still read to
    // their end: their sessions take the next statement.
    if (complete) complete = add(c <= 0 ? x.key() : y.key());
    if (c <= 0) {
      if (const auto more = x.advance(); !more) return more.failure();
    }
    if (c >= 0) {
      if (const auto more = y.advance(); !more) return more.failure();
    }
  }
  if (!complete) return std::optional<KeyList>();
  return std::optional<KeyList>(std::move(keys));
}

}  // namespace tidemark
