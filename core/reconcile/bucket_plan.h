// How reconcile cuts a key set into buckets and which buckets it looks
// into: bucket count from a row count, the buckets whose count or checksum
// differ between the sides, and whether the count must be taken again
// with more buckets. Pure functions over values; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "core/reconcile/reconcile_ports.h"

namespace tidemark {

// About this many keys per bucket. Differences spread evenly touch a
// bucket each: with 0.1 % of rows differing, about 10 % of the buckets
// differ and their keys are read, a tenth of the table's (a thousand keys
// a bucket would touch 63 % of them). A 10 M-row table has 100,000
// buckets: the two aggregates return that many rows, held while compared.
inline constexpr std::int64_t kKeysPerBucket = 100;
// At most this many buckets (about 20 MiB of bucket sums, both sides).
inline constexpr std::int64_t kMaxBuckets = 1 << 18;
// At most about this many keys (both sides together) are held and
// committed at once; a bucket larger than that is read whole.
inline constexpr std::int64_t kBatchKeys = 50000;

// Buckets for a table of `rows` rows: rows / kKeysPerBucket, within [1, kMaxBuckets].
std::int64_t bucket_count(std::int64_t rows);

// A bucket whose keys differ, with each side's count.
struct BucketDifference {
  std::int64_t bucket = 0;
  std::int64_t source_rows = 0;
  std::int64_t target_rows = 0;
};

// The buckets whose count or checksum differ (a bucket absent on one side
// counts 0 there), in bucket order.
std::vector<BucketDifference> differing_buckets(const std::vector<BucketSum>& source,
                                                const std::vector<BucketSum>& target);

// Whether the bucket count was too small for the rows found (statistics
// that lag far behind the table): the differing buckets hold more than a
// batch of keys, and the exact count `rows` (the larger side's total)
// calls for more buckets. Counting again costs a scan a side; reading a
// batch of keys costs less than that, so only more than a batch counts.
bool needs_more_buckets(const std::vector<BucketDifference>& differing, std::int64_t buckets, std::int64_t rows);

// The larger of the two sides' totals.
std::int64_t total_rows(const std::vector<BucketSum>& source, const std::vector<BucketSum>& target);

}  // namespace tidemark
