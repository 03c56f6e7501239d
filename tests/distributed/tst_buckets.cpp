#include <gtest/gtest.h>

#include "trainscope/distributed/buckets.h"

TEST(Buckets, ReverseOrderClosedAtTheLimit) {
    // Parameters 0..4 of 4, 4, 4, 4, 4 bytes; first bucket 4 bytes, then 8.
    auto b = ts::dist::assignBuckets({4, 4, 4, 4, 4}, 8, 4);
    ASSERT_EQ(b.size(), 3u);
    EXPECT_EQ(b[0], (std::vector<int>{4}));
    EXPECT_EQ(b[1], (std::vector<int>{3, 2}));
    EXPECT_EQ(b[2], (std::vector<int>{1, 0}));
}

TEST(Buckets, LargeParameterClosesTheBucketItJoinsAndNothingIsLost) {
    auto b = ts::dist::assignBuckets({1, 100, 1, 1}, 10, 10);
    int seen = 0;
    for (const auto& bucket : b) seen += static_cast<int>(bucket.size());
    EXPECT_EQ(seen, 4);
    EXPECT_EQ(b[0], (std::vector<int>{3, 2, 1}));  // 1 + 1 + 100 closes the first bucket
    EXPECT_EQ(b[1], (std::vector<int>{0}));
    EXPECT_THROW(ts::dist::assignBuckets({1}, 0, 1), std::invalid_argument);
}

TEST(Buckets, EveryBucketFilledToItsLimitByItsLastParameterAndInReverseOrder) {
    std::vector<int64_t> sizes;
    for (int i = 0; i < 200; ++i)
        sizes.push_back(1 + (i * 7919) % 997);  // 1 .. 997 bytes, scrambled
    const int64_t first = 1000, rest = 4000;
    const auto b = ts::dist::assignBuckets(sizes, rest, first);
    int expected = static_cast<int>(sizes.size()) - 1;
    for (size_t k = 0; k < b.size(); ++k) {
        const int64_t limit = k == 0 ? first : rest;
        int64_t filled = 0;
        for (int i : b[k]) {
            EXPECT_EQ(i, expected--);  // one run of indices, last parameter first
            filled += sizes[static_cast<size_t>(i)];
        }
        if (k + 1 < b.size()) EXPECT_GE(filled, limit) << "bucket " << k;
        EXPECT_LT(filled - sizes[static_cast<size_t>(b[k].back())], limit)
            << "bucket " << k;  // closed at once
    }
    EXPECT_EQ(expected, -1);
}
