#include "trainscope/distributed/buckets.h"

#include <stdexcept>

namespace ts::dist {

std::vector<std::vector<int>> assignBuckets(const std::vector<int64_t>& parameter_bytes,
                                            int64_t bucket_bytes, int64_t first_bucket_bytes) {
    if (bucket_bytes <= 0 || first_bucket_bytes <= 0)
        throw std::invalid_argument("bucket sizes must be positive");
    std::vector<std::vector<int>> buckets;
    std::vector<int> current;
    int64_t filled = 0;
    for (int i = static_cast<int>(parameter_bytes.size()) - 1; i >= 0; --i) {
        current.push_back(i);
        filled += parameter_bytes[static_cast<size_t>(i)];
        const int64_t limit = buckets.empty() ? first_bucket_bytes : bucket_bytes;
        if (filled >= limit) {
            buckets.push_back(std::move(current));
            current.clear();
            filled = 0;
        }
    }
    if (!current.empty()) buckets.push_back(std::move(current));
    return buckets;
}

}  // namespace ts::dist
