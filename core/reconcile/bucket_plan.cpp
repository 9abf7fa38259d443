#include "core/reconcile/bucket_plan.h"

#include <algorithm>
#include <map>

namespace tidemark {

std::int64_t bucket_count(std::int64_t rows) {
  const std::int64_t wanted = rows <= 0 ? 1 : (rows + kKeysPerBucket - 1) / kKeysPerBucket;
  return std::clamp<std::int64_t>(wanted, 1, kMaxBuckets);
}

std::vector<BucketDifference> differing_buckets(const std::vector<BucketSum>& source,
                                                const std::vector<BucketSum>& target) {
  std::map<std::int64_t, std::pair<const BucketSum*, const BucketSum*>> all;
  for (const BucketSum& b : source) all[b.bucket].first = &b;
  for (const BucketSum& b : target) all[b.bucket].second = &b;
  std::vector<BucketDifference> out;
  for (const auto& [bucket, sides] : all) {
    const BucketSum* s = sides.first;
    const BucketSum* t = sides.second;
    const std::int64_t s_rows = s ? s->rows : 0;
    const std::int64_t t_rows = t ? t->rows : 0;
    if (s_rows == 0 && t_rows == 0) continue;
    if (s && t && s->rows == t->rows && s->checksum == t->checksum) continue;
    out.push_back(BucketDifference{bucket, s_rows, t_rows});
  }
  return out;
}

bool needs_more_buckets(const std::vector<BucketDifference>& differing, std::int64_t buckets, std::int64_t rows) {
  if (bucket_count(rows) <= buckets) return false;
  std::int64_t keys = 0;
  for (const BucketDifference& d : differing) keys += d.source_rows + d.target_rows;
  return keys > kBatchKeys;
}

std::int64_t total_rows(const std::vector<BucketSum>& source, const std::vector<BucketSum>& target) {
  std::int64_t s = 0;
  std::int64_t t = 0;
  for (const BucketSum& b : source) s += b.rows;
  for (const BucketSum& b : target) t += b.rows;
  return std::max(s, t);
}

}  // namespace tidemark
