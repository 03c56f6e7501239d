// Gradient bucketing for bucketed DDP: which parameters share one all-reduce.
#pragma once

#include <cstdint>
#include <vector>

namespace ts::dist {

// PyTorch's default first bucket (dist._DEFAULT_FIRST_BUCKET_BYTES): small, so that the first
// all-reduce starts as early in backward as possible.
constexpr int64_t kFirstBucketBytes = 1 << 20;

// Assigns parameters to buckets in reverse registration order (gradients become ready
// roughly back to front during backward). A bucket is closed once it holds at least
// `first_bucket_bytes` (the first) or `bucket_bytes` (the rest). A parameter larger than a
// bucket does not get one of its own: it joins the open bucket and closes it, as in
// PyTorch's reducer. Returns, per bucket, the parameter indices it holds.
std::vector<std::vector<int>> assignBuckets(const std::vector<int64_t>& parameter_bytes,
                                            int64_t bucket_bytes, int64_t first_bucket_bytes);

}  // namespace ts::dist
