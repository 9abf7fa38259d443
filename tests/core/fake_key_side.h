// In-memory KeySide over the fakes' rows (tests/core/fake_ports.h): the
// source's rows (compared: cursor below the watermark) or the target's
// (every row). Key k prints as "(k)" and falls in bucket k % buckets; a
// row's hash is its cursor (the fakes' rows hold nothing else), and a
// bucket's checksum is the sum of its keys and hashes. It counts what it is asked,
// and fails where a test says. It implements the port, not the rule.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "fake_ports.h"

namespace tidemark {

class FakeKeySide final : public KeySide {
 public:
  // `source`: the source's rows; else `target`: the target's key -> cursor.
  explicit FakeKeySide(const std::vector<FakeRow>* source, const std::map<std::int64_t, std::int64_t>* target = nullptr)
      : source_(source), target_(target) {}

  std::int64_t estimate = 0;
  int sums_asked = 0;
  int keys_asked = 0;
  std::int64_t keys_returned = 0;
  std::string fail_keys;  // keys() fails with this
  std::string fail_send;  // send_bucket_sums fails with this
  // When set, each step sent and collected is written here, after `name`:
  // the order the two sides were asked in.
  std::vector<std::string>* steps = nullptr;
  std::string name;

  Result<std::int64_t> estimate_rows() override { return estimate; }

  Status send_bucket_sums(std::int64_t buckets, const KeyCompare& compare) override {
    if (sent_) std::abort();  // a step sent is collected before the next
    if (!fail_send.empty()) return Error{fail_send};
    sent_ = true;
    note("sends sums");
    sums_buckets_ = buckets;
    sums_watermark_ = compare.watermark;
    compared = compare.columns;
    return ok_status();
  }
  Result<std::vector<BucketSum>> bucket_sums() override {
    if (!sent_) std::abort();  // only what was sent is collected
    sent_ = false;
    note("collects sums");
    ++sums_asked;
    const std::int64_t buckets = sums_buckets_;
    const CursorValue& watermark = sums_watermark_;
    std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> sums;
    for (const auto& [key, cursor] : rows()) {
      if (source_ && !(cursor < watermark.raw)) continue;
      auto& s = sums[key % buckets];
      ++s.first;
      s.second += key * 1000003 + cursor;
    }
    std::vector<BucketSum> out;
    for (const auto& [bucket, s] : sums) out.push_back(BucketSum{bucket, s.first, std::to_string(s.second)});
    return out;
  }

  Status send_open_keys(std::int64_t buckets, const std::vector<std::int64_t>& which,
                        const KeyCompare& compare) override {
    if (sent_) std::abort();  // a step sent is collected before the next
    sent_ = true;
    note("sends listing");
    keys_buckets_ = buckets;
    keys_which_ = which;
    keys_watermark_ = compare.watermark;
    return ok_status();
  }
  Status open_keys() override {
    if (!sent_) std::abort();  // only what was sent is collected
    sent_ = false;
    note("collects listing");
    const std::int64_t buckets = keys_buckets_;
    const std::vector<std::int64_t>& which = keys_which_;
    const CursorValue& watermark = keys_watermark_;
    ++keys_asked;
    listing_.clear();
    next_ = 0;
    for (const auto& [key, cursor] : rows()) {
      if (std::find(which.begin(), which.end(), key % buckets) == which.end()) continue;
      KeyRow row;
      row.bucket = key % buckets;
      row.text = "(" + std::to_string(key) + ")";
      row.columns = {std::to_string(key)};
      row.flag = source_ != nullptr && cursor < watermark.raw;
      row.hash = cursor;
      listing_.push_back(row);
    }
    std::sort(listing_.begin(), listing_.end());
    if (after_open) after_open();
    return ok_status();
  }
  Result<std::vector<KeyRow>> next_keys(std::size_t most) override {
    if (!fail_keys.empty()) return Error{fail_keys};
    const std::size_t end = std::min(listing_.size(), next_ + most);
    std::vector<KeyRow> out(listing_.begin() + static_cast<std::ptrdiff_t>(next_),
                            listing_.begin() + static_cast<std::ptrdiff_t>(end));
    next_ = end;
    keys_returned += static_cast<std::int64_t>(out.size());
    return out;
  }
  void close_keys() override { ++closed; }
  Result<std::vector<std::size_t>> held_now(const std::vector<KeyRow>& keys) override {
    ++held_asked;
    std::vector<std::size_t> out;
    const auto now = rows();
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const std::int64_t key = std::stoll(*keys[i].columns.at(0));
      const auto has = [&](const std::pair<std::int64_t, std::int64_t>& r) { return r.first == key; };
      if (std::any_of(now.begin(), now.end(), has)) out.push_back(i);
    }
    return out;
  }
  int held_asked = 0;
  std::vector<FingerprintColumn> compared;  // the columns the last count was asked to compare
  std::function<void()> after_open;  // runs once the listing is taken: a change it makes is not in it
  int closed = 0;

 private:
  void note(const std::string& step) {
    if (steps) steps->push_back(name + " " + step);
  }
  std::vector<std::pair<std::int64_t, std::int64_t>> rows() const {
    std::vector<std::pair<std::int64_t, std::int64_t>> out;
    if (source_) {
      for (const FakeRow& r : *source_) out.emplace_back(r.key, r.cursor);
    } else {
      for (const auto& [k, c] : *target_) out.emplace_back(k, c);
    }
    return out;
  }

  const std::vector<FakeRow>* source_;
  const std::map<std::int64_t, std::int64_t>* target_;
  std::vector<KeyRow> listing_;
  std::size_t next_ = 0;
  bool sent_ = false;  // a step was sent and not collected yet
  std::int64_t sums_buckets_ = 0;
  CursorValue sums_watermark_;
  std::int64_t keys_buckets_ = 0;
  std::vector<std::int64_t> keys_which_;
  CursorValue keys_watermark_;
};

}  // namespace tidemark
