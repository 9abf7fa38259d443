// Reconcile's bucket plan as tables: expected values come from the rules
// (about a hundred keys a bucket, more buckets only past a batch of
// kBatchKeys keys), not from running the code.
#include <doctest/doctest.h>

#include "core/reconcile/bucket_plan.h"

namespace tidemark {

TEST_CASE("bucket count: about a hundred keys a bucket, at least one, at most kMaxBuckets") {
  struct Row {
    std::int64_t rows;
    std::int64_t buckets;
  };
  const Row rows[] = {
      {-1, 1},    {0, 1},          {1, 1},            {100, 1},           {101, 2},
      {2000, 20}, {1000000, 10000}, {10000000, 100000}, {100000000, kMaxBuckets}, {2000000000000, kMaxBuckets},
  };
  for (const Row& r : rows) {
    CAPTURE(r.rows);
    CHECK(bucket_count(r.rows) == r.buckets);
  }
}

TEST_CASE("differing buckets: a count or a checksum apart, or present on one side only") {
  const std::vector<BucketSum> source{{0, 10, "100"}, {1, 10, "200"}, {2, 5, "50"}, {4, 3, "9"}};
  const std::vector<BucketSum> target{{0, 10, "100"}, {1, 10, "201"}, {2, 4, "40"}, {3, 1, "7"}};
  const auto d = differing_buckets(source, target);
  REQUIRE(d.size() == 4);
  CHECK(d[0].bucket == 1);  // same count, other checksum: a key replaced by another
  CHECK(d[1].bucket == 2);
  CHECK(d[1].source_rows == 5);
  CHECK(d[1].target_rows == 4);
  CHECK(d[2].bucket == 3);  // the target only
  CHECK(d[2].source_rows == 0);
  CHECK(d[3].bucket == 4);  // the source only
  CHECK(d[3].target_rows == 0);
  CHECK(differing_buckets(source, source).empty());
  CHECK(differing_buckets({}, {}).empty());
}

TEST_CASE("more buckets only when statistics lagged and the differences exceed a batch") {
  const std::vector<BucketDifference> small{{0, 20000, 19990}};
  const std::vector<BucketDifference> large{{0, 40000, 39990}};
  CHECK_FALSE(needs_more_buckets(small, 1, 40000));   // a batch reads them all
  CHECK(needs_more_buckets(large, 1, 80000));          // 800 buckets would do
  CHECK_FALSE(needs_more_buckets(large, 800, 80000));  // sized right already
  CHECK_FALSE(needs_more_buckets({}, 1, 10000000));   // nothing differs: nothing to read
  CHECK(total_rows({{0, 5, ""}, {1, 6, ""}}, {{0, 12, ""}}) == 12);
}

}  // namespace tidemark
