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
